// The guilds domain as the app mounts it (domain.ts): guilds, channels, invites, and READY's guilds.
import type { DomainModule } from '../domain'
import { guildIdentify } from './gateway'
import { messageEndpoints } from './message-routes'
import { guildEndpoints } from './routes'

export const guildsModule = {
  name: 'guilds',
  endpoints: [...guildEndpoints, ...messageEndpoints],
  identify: guildIdentify,
} satisfies DomainModule
