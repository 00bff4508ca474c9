// /authorize-ip#token=…: allow logins from the new location the e-mail names.
import { client } from './lib/client'
import { runLinkPage } from './lib/link-page'

void runLinkPage(
  'authorize-ip',
  async (token) => {
    await client.rest.post('/auth/authorize-ip', { body: { token }, auth: false })
    return {
      title: 'Location authorized',
      message: 'You can now log in from this location.',
      next: { href: '/login', label: 'Log in' },
    }
  },
  'This link did not work',
)
