// The relationships domain as the app mounts it (domain.ts): friends, blocks and friend requests, their READY fields;
// presence (Gateway op 3, online and offline as sessions start and end); game relationships and game invites.
import { onProfileChange } from '../accounts/profile-hooks'
import type { DomainModule } from '../domain'
import { gameEndpoints } from './game-routes'
import { relationshipIdentify } from './gateway'
import { sweepGameInvites } from './invites'
import { presenceSessionEnd, presenceSessionStart, presenceUpdate } from './presence'
import { tellFriendsProfile } from './profile'
import { relationshipEndpoints } from './routes'

export const relationshipsModule = {
  name: 'relationships',
  endpoints: [...relationshipEndpoints, ...gameEndpoints],
  identify: relationshipIdentify,
  opcodes: { 3: presenceUpdate },
  sessionStart: presenceSessionStart,
  sessionEnd: presenceSessionEnd,
  sweep: sweepGameInvites,
  // A changed display name reaches the friends (PRESENCE_UPDATE with the user).
  install: () => onProfileChange(tellFriendsProfile),
} satisfies DomainModule
