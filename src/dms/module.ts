// The dms domain as the app mounts it (domain.ts): opening and listing DM channels, READY's private_channels, and
// the rule a DM's messages obey, installed into the guild model (which holds DM channels and their messages).
import type { DomainModule } from '../domain'
import { installDmRules } from '../guilds/public'
import { dmIdentify } from './gateway'
import { dmEndpoints } from './routes'
import { maySend } from './rules'

export const dmsModule = {
  name: 'dms',
  endpoints: dmEndpoints,
  identify: dmIdentify,
  install: () => installDmRules({ maySend }),
} satisfies DomainModule
