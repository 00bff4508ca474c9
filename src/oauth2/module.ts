// The oauth2 domain as the app mounts it (domain.ts): consent and token endpoints, and the Bot and Bearer tokens.
import type { DomainModule } from '../domain'
import { resolveBearerToken, resolveBotToken } from './applications'
import { liveGrantFamilies } from './revocation'
import { liveApplications } from './store'
import { oauth2Endpoints } from './routes'

export const oauth2Module = {
  name: 'oauth2',
  endpoints: oauth2Endpoints,
  tokens: { bot: resolveBotToken, bearer: resolveBearerToken },
  liveGrants: liveGrantFamilies,
  liveBots: liveApplications,
} satisfies DomainModule
