// The guilds domain as the app mounts it (domain.ts): guilds, channels, invites, READY's guilds, and Gateway op 8
// (Request Guild Members).
import type { DomainModule } from '../domain'
import { guildIdentify } from './gateway'
import { requestGuildMembers } from './member-chunks'
import { messageEndpoints } from './message-routes'
import { guildEndpoints } from './routes'

export const guildsModule = {
  name: 'guilds',
  endpoints: [...guildEndpoints, ...messageEndpoints],
  identify: guildIdentify,
  opcodes: { 8: requestGuildMembers },
} satisfies DomainModule
