// The navigation every logged-in page carries (UX-T4 finding 8, 22): home, settings, log out. Logging out ends the
// session (and with it the first-party token) and says so on the login page.
import { forgetAppToken } from './app-client'
import { client } from './client'
import { el } from './ui'

/** Fill `<nav id="site-nav">` of the page's header; `current` is marked for screen readers. */
export function siteNav(current: 'home' | 'settings' | 'lobby'): void {
  const nav = document.getElementById('site-nav')
  if (!nav) return
  const link = (href: string, label: string, here: boolean) =>
    el('a', { href, ...(here ? { 'aria-current': 'page' } : {}) }, label)
  nav.replaceChildren(
    link('/app', 'Home', current === 'home'),
    link('/settings/security', 'Settings', current === 'settings'),
    el('button', { type: 'button', class: 'secondary', id: 'log-out', onclick: logOut }, 'Log out'),
  )
}

export async function logOut(): Promise<void> {
  await client.auth.logout().catch(() => undefined)
  client.setToken(null)
  forgetAppToken()
  location.assign('/login?logged_out=1')
}
