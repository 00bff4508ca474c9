// The voice domain as the app mounts it (domain.ts): op 17, 100 and 101, the end of a Gateway session, the lobby
// members who leave (lobbies tell whoever listens), the calls that end with the server, and (several nodes) the
// messages of other nodes about the calls this one holds.
import type { DomainModule } from '../domain'
import { onNodeMessage, onOrphanedPlace } from '../gateway/nodes'
import { onMemberLeave } from '../lobbies/voice-presence'
import { stopAllCalls } from './calls'
import { voiceNodeMessage, voiceOpcodes, voiceSessionEnd } from './gateway'
import { callOrphaned, routeMemberLeft, startKeepingRooms, stopKeepingRooms } from './placement'

export const voiceModule = {
  name: 'voice',
  opcodes: voiceOpcodes,
  sessionEnd: voiceSessionEnd,
  install: () => {
    onMemberLeave(routeMemberLeft)
    onNodeMessage('voice', voiceNodeMessage)
    onOrphanedPlace('voice:room:', callOrphaned)
  },
  start: startKeepingRooms,
  async stop() {
    await stopKeepingRooms()
    await stopAllCalls()
  },
} satisfies DomainModule
