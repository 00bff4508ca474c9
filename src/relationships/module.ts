// The relationships domain as the app mounts it (domain.ts): friends, blocks and friend requests, their READY fields;
// presence (Gateway op 3, online and offline as sessions start and end); game relationships and game invites.
import type { DomainModule } from '../domain'
import { relationshipIdentify } from './gateway'
import { presenceSessionEnd, presenceSessionStart, presenceUpdate } from './presence'
import { gameEndpoints } from './game-routes'
import { sweepGameInvites } from './invites'
import { relationshipEndpoints } from './routes'

export const relationshipsModule = {
  name: 'relationships',
  endpoints: [...relationshipEndpoints, ...gameEndpoints],
  identify: relationshipIdentify,
  opcodes: { 3: presenceUpdate },
  sessionStart: presenceSessionStart,
  sessionEnd: presenceSessionEnd,
  sweep: sweepGameInvites,
} satisfies DomainModule
