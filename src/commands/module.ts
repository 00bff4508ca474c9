// The commands domain as the app mounts it (domain.ts): applications' commands, global and per guild.
import type { DomainModule } from '../domain'
import { commandEndpoints } from './routes'

export const commandsModule = {
  name: 'commands',
  endpoints: commandEndpoints,
} satisfies DomainModule
