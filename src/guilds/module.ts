// The guilds domain as the app mounts it (domain.ts): guilds, channels, invites, and READY's guilds.
import type { DomainModule } from '../domain'
import { guildIdentify } from './gateway'
import { channelRoutes, guildEndpoints, guildRoutes, inviteRoutes } from './routes'

export const guildsModule = {
  name: 'guilds',
  endpoints: guildEndpoints,
  api: [guildRoutes, channelRoutes, inviteRoutes],
  identify: guildIdentify,
} satisfies DomainModule
