// The guilds domain as the app mounts it (domain.ts): guilds, channels, invites, and READY's guilds.
import type { DomainModule } from '../domain'
import { guildIdentify } from './gateway'
import { guildEndpoints } from './routes'

export const guildsModule = {
  name: 'guilds',
  endpoints: guildEndpoints,
  identify: guildIdentify,
} satisfies DomainModule
