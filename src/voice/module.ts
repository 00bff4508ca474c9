// The voice domain as the app mounts it (domain.ts): op 17, 100 and 101, the end of a Gateway session, the lobby
// members who leave (lobbies tell whoever listens) and the calls that end with the server.
import type { DomainModule } from '../domain'
import { onMemberLeave } from '../lobbies/voice-presence'
import { memberLeft, stopAllCalls } from './calls'
import { voiceOpcodes, voiceSessionEnd } from './gateway'

export const voiceModule = {
  name: 'voice',
  opcodes: voiceOpcodes,
  sessionEnd: voiceSessionEnd,
  install: () => onMemberLeave(memberLeft),
  stop: stopAllCalls,
} satisfies DomainModule
