// /authorize-ip#token=…: allow logins from the new location the e-mail names.
import { api } from './lib/api'
import { runLinkPage } from './lib/link-page'

void runLinkPage(
  'authorize-ip',
  async (token) => {
    await api('POST', '/auth/authorize-ip', { token }, { anonymous: true })
    return {
      title: 'Location authorized',
      message: 'You can now log in from this location.',
      next: { href: '/login', label: 'Log in' },
    }
  },
  'This link did not work',
)
