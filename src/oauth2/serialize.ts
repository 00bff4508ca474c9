// Discord's partial application object as OAuth2 screens and /oauth2/@me show it.
import type { ApplicationRow } from './tables'

export function publicApplication(app: ApplicationRow) {
  return {
    id: app.id,
    name: app.name,
    icon: null,
    description: '',
    summary: '',
    type: null,
    hook: true,
    bot_public: true,
    bot_require_code_grant: false,
    flags: app.flags,
  }
}
