// /ra/<fingerprint>: the "phone" side of remote (QR) login for a logged-in person. Opening it claims the desktop's
// code (POST /users/@me/remote-auth: the desktop then shows who is about to log in), then Approve finishes it (with
// the elevation dialog when the account has MFA: 401 60003) or Deny cancels it. Logged out: to /login and back.
import { ApiError, client, RemoteAuthRequest } from './lib/client'
import { installElevationDialog } from './lib/factor-form'
import { shortFingerprint } from './lib/people'
import { $, Cancelled, goLogin, pathParameter, show, submitting, focusHeading } from './lib/ui'

const FINGERPRINT = /^[A-Za-z0-9_-]{43}$/
const form = $<HTMLFormElement>('#ra-form')
const fingerprint = pathParameter('/ra/')
/** The handshake token of this fingerprint, kept for the tab so a reload can still approve or deny. */
const key = `remote-auth:${fingerprint}`

installElevationDialog()

function result(title: string, message: string) {
  sessionStorage.removeItem(key)
  $('#ra-title').textContent = title
  $('#ra-message').textContent = message
  show(form, false)
  show($('#ra-result'))
  $('#ra-card').removeAttribute('aria-busy')
}

const EXPIRED = 'This code expired or was already used. Show a new QR code on the other device and scan it again.'

/** A refused handshake or fingerprint (unknown, used, expired: the server does not say which) ends the page. */
function refused(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.code !== 50035) return false
  result('This code cannot be used', EXPIRED)
  return true
}

async function claim(): Promise<RemoteAuthRequest | null> {
  const kept = sessionStorage.getItem(key)
  if (kept) return new RemoteAuthRequest(client, fingerprint, kept)
  try {
    const request = await client.remoteAuth.scan(fingerprint)
    sessionStorage.setItem(key, request.handshakeToken)
    return request
  } catch (error) {
    if (refused(error)) return null
    throw error
  }
}

async function start() {
  if (!client.token) goLogin()
  if (!FINGERPRINT.test(fingerprint))
    return result('This is not a login code', 'The link is incomplete. Scan the QR code on the other device again.')
  let me: { username: string; global_name?: string | null }
  try {
    me = await client.rest.get('/users/@me')
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      client.setToken(null)
      goLogin()
    }
    throw error
  }
  $('#ra-me').textContent = me.global_name ? `${me.global_name} (${me.username})` : me.username
  $('#ra-code').textContent = shortFingerprint(fingerprint)
  $('#ra-fingerprint').textContent = fingerprint
  const handshake = await claim()
  if (!handshake) return
  show(form)
  $('#ra-card').removeAttribute('aria-busy')
  // Focus on the question, not on Approve: one stray Enter must not hand over the account (UX-T4 finding 31).
  focusHeading(form)

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void submitting(form, async () => {
      try {
        await handshake.approve()
      } catch (error) {
        if (refused(error)) return
        throw error
      }
      result(
        'Approved',
        'The other device is now logged in to your account. You can log it out from your security settings.',
      )
    })
  })
  $('#ra-deny').addEventListener('click', () =>
    submitting(form, async () => {
      try {
        await handshake.deny()
      } catch (error) {
        if (refused(error)) return
        throw error
      }
      result('Denied', 'The other device was not logged in.')
    }),
  )
}

start().catch((error) => {
  if (error instanceof Cancelled) return
  result('Something went wrong', error instanceof Error ? error.message : String(error))
})
