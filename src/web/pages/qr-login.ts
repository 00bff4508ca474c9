// The desktop side of remote (QR) login, in the login page (README "Remote (QR) login"), on the SDK's
// client.remoteAuth.desktop(): its key in WebCrypto, the /remote-auth?v=2 socket, the code; here the QR of its URL,
// "Log in as <name>?" once a phone claimed it, the outcome. A code that lived its time is replaced by a new one.
import { toString as qrSvg } from 'qrcode/lib/browser.js'
import { client } from './lib/client'
import { avatarFor, shortFingerprint, type RemoteUser } from './lib/people'
import { el, show } from './lib/ui'

type DesktopLogin = ReturnType<typeof client.remoteAuth.desktop>

/**
 * Run the QR panel in `panel` until `stop()`: `onToken` gets the session token once a phone approved. Everything the
 * panel shows is rebuilt here (its HTML is an empty landmark).
 */
export function startQrLogin(panel: HTMLElement, onToken: (token: string) => void): { stop: () => void } {
  const title = el('h2', { id: 'qr-title' }, 'Log in with a QR code')
  const body = el('div', { class: 'qr-body', 'aria-live': 'polite' })
  panel.replaceChildren(title, body)
  panel.setAttribute('aria-labelledby', 'qr-title')
  panel.removeAttribute('aria-label')
  show(panel)

  let login: DesktopLogin | undefined
  let stopped = false
  /** Each login's run: what an old one emits is ignored. */
  let run = 0

  const view = (...children: (Node | string)[]) => body.replaceChildren(...children)
  const startOver = (label: string) =>
    el('button', { type: 'button', class: 'secondary', id: 'qr-restart', onclick: () => connect() }, label)

  function waiting() {
    view(
      el('div', { class: 'qr qr-waiting', id: 'qr-code', 'aria-busy': 'true' }),
      el('p', { class: 'hint' }, 'Preparing a code…'),
    )
  }

  async function showCode(url: string, fingerprint: string, mine: number) {
    const svgText = await qrSvg(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' })
    if (mine !== run) return
    const svg = document.importNode(new DOMParser().parseFromString(svgText, 'image/svg+xml').documentElement, true)
    const code = el(
      'div',
      {
        class: 'qr',
        id: 'qr-code',
        role: 'img',
        'aria-label': 'QR code for logging in from a device where you are logged in',
        'data-qr-url': url,
      },
      svg,
    )
    view(
      code,
      el('p', {}, 'Scan it with a phone or another device where you are logged in, then approve there.'),
      el(
        'p',
        { class: 'hint' },
        'The approving device shows this code too: check that it is the same, ',
        el('span', { class: 'secret', id: 'qr-fingerprint' }, shortFingerprint(fingerprint)),
        '.',
      ),
    )
  }

  function showUser(user: RemoteUser) {
    view(
      el(
        'div',
        { class: 'qr-user' },
        avatarFor(user),
        el('h3', { id: 'qr-question' }, 'Log in as ', el('strong', { id: 'qr-user-name' }, user.username), '?'),
      ),
      el('p', { class: 'hint' }, 'Approve on your other device to continue, or deny there if this is not you.'),
      el('div', { class: 'actions' }, startOver('Start over')),
    )
  }

  function ended(message: string, heading: string) {
    view(
      el('h3', { id: 'qr-state' }, heading),
      el('p', { class: 'hint' }, message),
      el('div', { class: 'actions' }, startOver('Show a new code')),
    )
  }

  function teardown() {
    run += 1
    login?.stop()
    login = undefined
  }

  function connect() {
    teardown()
    if (stopped) return
    const mine = run
    waiting()
    // A code that lived its time is replaced here rather than by the SDK: a tab nobody looks at waits until shown.
    const current = client.remoteAuth.desktop({ retries: Number.POSITIVE_INFINITY, renew: false })
    login = current
    current.on('qr', (url, fingerprint) => void showCode(url, fingerprint, mine))
    current.on('pendingUser', (user) => mine === run && showUser(user))
    current.on('done', ({ token }) => mine === run && onToken(token))
    current.on('cancelled', () => {
      if (mine === run)
        ended('The login was denied on the other device. Nothing was shared with this browser.', 'Login cancelled')
    })
    current.on('expired', () => {
      if (mine !== run) return
      waiting()
      const again = () => {
        if (mine !== run) return
        if (!document.hidden) return connect()
        document.addEventListener('visibilitychange', again, { once: true })
      }
      again()
    })
    current.on('error', (error) => {
      if (mine !== run) return
      ended(
        error.name === 'ApiError'
          ? `${error.message}. Scan a new code to try again.`
          : 'Something went wrong with this code. Show a new one to try again.',
        'QR login failed',
      )
    })
  }

  connect()
  return {
    stop() {
      stopped = true
      teardown()
      show(panel, false)
    },
  }
}
