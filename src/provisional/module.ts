// The provisional accounts domain as the app mounts it (domain.ts): the Social SDK's token endpoints, and the merge
// of a provisional account that OAuth2's token endpoint asks for.
import type { DomainModule } from '../domain'
import { setMergePort } from '../oauth2/merge-port'
import { prepareMerge } from './merge'
import { provisionalEndpoints } from './routes'

export const provisionalModule = {
  name: 'provisional',
  endpoints: provisionalEndpoints,
  // POST /oauth2/token merges a provisional account into the account that authorised the code (oauth2 below us).
  install: () => setMergePort({ prepare: prepareMerge }),
} satisfies DomainModule
