// /verify#token=…: confirm the e-mail address. The server logs this browser in; its token is kept unless a session
// is already here.
import { api, session } from './lib/api'
import { runLinkPage } from './lib/link-page'

void runLinkPage(
  'verify',
  async (token) => {
    const reply = await api<{ token: string; user_id: string }>('POST', '/auth/verify', { token }, { anonymous: true })
    if (!session.token()) session.set(reply.token)
    return {
      title: 'E-mail verified',
      message: 'Thank you: your e-mail address is confirmed.',
      next: { href: '/settings/security', label: 'Continue' },
    }
  },
  'This link did not work',
)
