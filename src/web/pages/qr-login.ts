// The desktop side of remote (QR) login, in the login page (README "Remote (QR) login"): a fresh RSA-OAEP key
// (2048 bits, SHA-256) per code, the /remote-auth?v=2 socket, the QR of `{WEB_URL}/ra/<fingerprint>`, heartbeats;
// after a phone claims the code "Log in as <name>?", after it approves the ticket exchanged for a token that only
// this key can decrypt. A socket that times out or drops is replaced by a new one with a new key (a new code).
import { toString as qrSvg } from 'qrcode/lib/browser.js'
import { api, ApiFailure } from './lib/api'
import { avatarFor, parseUserPayload, shortFingerprint, type RemoteUser } from './lib/remote-auth'
import { el, show } from './lib/ui'

type Frame = { op?: unknown; [field: string]: unknown }

const OAEP = { name: 'RSA-OAEP', hash: 'SHA-256' } as const
/** Reconnect delays when a socket ends before it showed a code (a closed server, a full per-IP allowance). */
const RETRY_MS = [1000, 2000, 5000, 10_000, 30_000]

const base64 = (bytes: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
const base64url = (bytes: ArrayBuffer) => base64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

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

  let socket: WebSocket | undefined
  let heartbeat: ReturnType<typeof setInterval> | undefined
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let failures = 0
  let stopped = false
  /** Each socket's run: frames of an old socket are ignored. */
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

  async function showCode(fingerprint: string, mine: number) {
    const url = `${location.origin}/ra/${fingerprint}`
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
        'Code ',
        el('span', { class: 'secret', id: 'qr-fingerprint' }, shortFingerprint(fingerprint)),
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
    clearInterval(heartbeat)
    clearTimeout(retryTimer)
    const old = socket
    socket = undefined
    if (old && old.readyState <= WebSocket.OPEN) old.close(1000)
  }

  async function connect() {
    teardown()
    if (stopped) return
    const mine = run
    waiting()
    let keys: CryptoKeyPair
    try {
      keys = await crypto.subtle.generateKey(
        { ...OAEP, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
        false,
        ['encrypt', 'decrypt'],
      )
    } catch {
      return ended(
        'This browser cannot make the key a QR login needs. Log in with your password instead.',
        'QR login unavailable',
      )
    }
    if (mine !== run) return
    const spki = await crypto.subtle.exportKey('spki', keys.publicKey)
    const decrypt = async (text: string) =>
      new Uint8Array(await crypto.subtle.decrypt(OAEP, keys.privateKey, fromBase64(text)))
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/remote-auth?v=2`)
    socket = ws
    /** What the socket reached: a code shown, a finished login (pending_login or cancel: its close is expected). */
    let shown = false
    let settled = false
    const send = (frame: Record<string, unknown>) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(frame))

    ws.addEventListener('message', async (event) => {
      if (mine !== run) return
      let frame: Frame
      try {
        frame = JSON.parse(String(event.data))
      } catch {
        return
      }
      try {
        switch (frame.op) {
          case 'hello': {
            const interval = Number(frame.heartbeat_interval) || 41_250
            heartbeat = setInterval(() => send({ op: 'heartbeat' }), interval)
            send({ op: 'init', encoded_public_key: base64(spki) })
            break
          }
          case 'nonce_proof':
            send({
              op: 'nonce_proof',
              nonce: base64url((await decrypt(String(frame.encrypted_nonce))).buffer as ArrayBuffer),
            })
            break
          case 'pending_remote_init':
            shown = true
            failures = 0
            await showCode(String(frame.fingerprint), mine)
            break
          case 'pending_ticket': {
            const user = parseUserPayload(new TextDecoder().decode(await decrypt(String(frame.encrypted_user_payload))))
            if (user && mine === run && !settled) showUser(user)
            break
          }
          case 'pending_login': {
            settled = true
            view(el('p', { id: 'qr-state' }, 'Approved. Logging you in…'))
            const { encrypted_token } = await api<{ encrypted_token: string }>(
              'POST',
              '/users/@me/remote-auth/login',
              { ticket: frame.ticket },
              { anonymous: true },
            )
            const token = new TextDecoder().decode(await decrypt(encrypted_token))
            if (mine === run) onToken(token)
            break
          }
          case 'cancel':
            settled = true
            ended('The login was denied on the other device. Nothing was shared with this browser.', 'Login cancelled')
            break
        }
      } catch (error) {
        settled = true
        teardown()
        const message =
          error instanceof ApiFailure
            ? `${error.message}. Scan a new code to try again.`
            : 'Something went wrong with this code. Show a new one to try again.'
        ended(message, 'QR login failed')
      }
    })

    ws.addEventListener('close', () => {
      if (mine !== run || settled || stopped) return
      clearInterval(heartbeat)
      socket = undefined
      // A code that lived its time (or a dropped socket) is replaced at once; a socket that never got as far as a
      // code waits before trying again, longer each time.
      // A tab nobody looks at waits until it is shown again.
      const delay = shown ? 0 : RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]
      waiting()
      const again = () => {
        if (mine !== run) return
        if (!document.hidden) return void connect()
        document.addEventListener('visibilitychange', again, { once: true })
      }
      retryTimer = setTimeout(again, delay)
    })
  }

  void connect()
  return {
    stop() {
      stopped = true
      teardown()
      show(panel, false)
    },
  }
}
