// The guilds domain as the app mounts it (domain.ts): guilds, channels, invites, and READY's guilds.
import type { DomainModule } from '../domain'
import { guildIdentify } from './gateway'
import { channelMessagesGet, channelRoutes, guildRoutes, inviteRoutes } from './routes'

export const guildsModule = {
  name: 'guilds',
  api: [guildRoutes, channelRoutes, inviteRoutes],
  lane: [channelMessagesGet],
  identify: guildIdentify,
} satisfies DomainModule
