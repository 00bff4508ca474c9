// /verify#token=…: confirm the e-mail address. The server logs this browser in; its token is kept unless a session
// is already here. A link that no longer works is explained as the reset page explains its own (UX-T4 finding 17):
// already verified says so; logged in and not verified offers a new link at once; else the way to ask for one.
import { ApiError, client } from './lib/client'
import { runLinkPage } from './lib/link-page'
import { el } from './lib/ui'

type Me = { email: string | null; verified: boolean }

/** A link that failed: what the account's state says about it, when this browser is logged in. */
async function explain(failure: unknown) {
  // Only a refused token is a link that no longer works (not a server or connection failure).
  if (!(failure instanceof ApiError && failure.status === 400)) return undefined
  if (!client.token) {
    return {
      title: 'This link no longer works',
      message:
        'Verification links work once and for a limited time. Log in: if your address still needs verifying, the settings page sends a new link.',
      next: { href: '/login?redirect_to=%2Fsettings%2Fsecurity', label: 'Log in' },
    }
  }
  const me = (await client.rest.get('/users/@me')) as Me
  if (me.verified)
    return {
      title: 'Your e-mail is already verified',
      message: `${me.email ?? 'Your address'} is confirmed: there is nothing more to do.`,
      next: { href: '/app', label: 'Continue' },
    }
  const status = el('p', { class: 'hint', role: 'status' })
  const send = el('button', { type: 'button', class: 'secondary', id: 'send-new-link' }, 'Send me a new link')
  send.addEventListener('click', async () => {
    send.disabled = true
    try {
      await client.rest.post('/auth/verify/resend')
      status.textContent = `We sent a new link to ${me.email}. Open the newest e-mail.`
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error)
      send.disabled = false
    }
  })
  return {
    title: 'This link no longer works',
    message: 'Verification links work once and for a limited time, and a newer link replaces an older one.',
    action: el('div', { class: 'actions' }, send, status),
    next: { href: '/app', label: 'Go home' },
  }
}

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
  explain,
)
