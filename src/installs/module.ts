// The installs domain: an application's bot added to a guild through OAuth2's bot scope. oauth2/ checks the request
// and asks the consent, guilds/ adds the member and its managed role; both stand on one floor and never import each
// other, so this module, above both, joins them (oauth2's install port filled with guilds').
import type { DomainModule } from '../domain'
import { guildsForInstalls } from '../guilds/public'
import { setInstallPort } from '../oauth2/install-port'

export const installsModule = {
  name: 'installs',
  install: () => setInstallPort(guildsForInstalls),
} satisfies DomainModule
