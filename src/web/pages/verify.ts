// /verify#token=…: confirm the e-mail address. The server logs this browser in; its token is kept unless a session
// is already here.
import { client } from './lib/client'
import { runLinkPage } from './lib/link-page'

void runLinkPage(
  'verify',
  async (token) => {
    // Logged in already: that session stays this browser's (a new one is kept only where there was none).
    const reply = await client.rest.post('/auth/verify', { body: { token }, auth: false })
    if (!client.token) client.setToken(reply.token)
    return {
      title: 'E-mail verified',
      message: 'Thank you: your e-mail address is confirmed.',
      next: { href: '/app', label: 'Continue' },
    }
  },
  'This link did not work',
)
