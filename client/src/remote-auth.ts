// QR login ("log in with your phone"). The desktop side speaks the remote-auth gateway v2 (/remote-auth?v=2): a fresh
// RSA-OAEP key (2048 bits, SHA-256) in WebCrypto per code, the nonce proof, the fingerprint (base64url SHA-256 of the
// key) in the QR URL `{webUrl}/ra/<fingerprint>`, then the user a phone claimed the code for, and after its approval a
// ticket exchanged for a token only this key can decrypt. A code that lived its time is replaced by a new one. The
// mobile side (a logged-in client) claims a scanned code, then approves (elevated with MFA: onMfaRequired) or denies.
import type { Session } from './auth'
import type { Client } from './client'
import { Emitter } from './emitter'
import { ApiError, ConnectionError } from './errors'

/** The user a phone claimed the code for, as the desktop shows them before the approval. */
export type RemoteUser = { id: string; discriminator: string; avatar: string | null; username: string }

export type DesktopLoginEvents = {
  /** A code to show as a QR (again with a new URL each time one expired). */
  qr: (url: string, fingerprint: string) => void
  /** A phone claimed the code: "Log in as <username>?" until it approves or denies. */
  pendingUser: (user: RemoteUser) => void
  /** Approved: the token is the client's now. */
  done: (session: Session) => void
  /** Denied on the phone. */
  cancelled: () => void
  /** The code lived its time: a new one follows at once (`qr` again), unless `renew: false` ended the login. */
  expired: () => void
  /** Given up: the server could not be reached (after the retries), or the ticket was refused. */
  error: (error: ApiError | ConnectionError) => void
}

export type DesktopLoginOptions = {
  /** Where the server's pages are (its WEB_URL), for the QR URL; default the client's baseUrl. */
  webUrl?: string
  /** Show a new code when one expires (default true); false: the login ends (wait() resolves null). */
  renew?: boolean
  /** Attempts to open a socket that never got as far as a code, before `error` (default 5; waits 1, 2, 5, 10, 30 s). */
  retries?: number
}

const OAEP = { name: 'RSA-OAEP', hash: 'SHA-256' } as const
const RETRY_MS = [1000, 2000, 5000, 10_000, 30_000]
const FINGERPRINT = /\/ra\/([^/?#]+)/

const b64 = (bytes: ArrayBuffer | Uint8Array) => {
  let text = ''
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte)
  return btoa(text)
}
const fromB64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
const b64url = (bytes: ArrayBuffer | Uint8Array) =>
  b64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

/** `id:discriminator:avatar:username` (avatar "0" when none), as the server encrypts it in pending_ticket. */
function parseUser(text: string): RemoteUser | null {
  const [id, discriminator, avatar, ...rest] = text.split(':')
  const username = rest.join(':')
  if (!id || !/^\d+$/.test(id) || discriminator === undefined || !username) return null
  return { id, discriminator, avatar: avatar && avatar !== '0' ? avatar : null, username }
}

/** The desktop side of one QR login: events, wait(), stop(). */
export class DesktopLogin extends Emitter<DesktopLoginEvents> {
  /** The QR URL shown now, its fingerprint, and the user who claimed it. */
  url?: string
  fingerprint?: string
  user?: RemoteUser
  #socket?: WebSocket
  #heartbeat?: ReturnType<typeof setInterval>
  #retry?: ReturnType<typeof setTimeout>
  #run = 0
  #failures = 0
  #ended = false
  #result: Promise<Session | null>
  #settle!: (session: Session | null) => void

  constructor(
    private readonly client: Client,
    private readonly options: DesktopLoginOptions = {},
  ) {
    super()
    this.#result = new Promise((resolve) => (this.#settle = resolve))
    void this.#connect()
  }

  /** The session once approved; null when denied, stopped, expired without renew, or given up (see `error`). */
  wait(): Promise<Session | null> {
    return this.#result
  }

  /** Stop: the socket closes, no new code is made, wait() resolves null. */
  stop(): void {
    this.#end(null)
  }

  #end(session: Session | null): void {
    if (this.#ended) return
    this.#ended = true
    this.#teardown()
    this.#settle(session)
  }

  #teardown(): void {
    this.#run += 1
    clearInterval(this.#heartbeat)
    clearTimeout(this.#retry)
    const old = this.#socket
    this.#socket = undefined
    if (old && old.readyState <= 1) old.close(1000)
  }

  #fail(error: ApiError | ConnectionError): void {
    if (this.#ended) return
    this.#end(null)
    this.emit('error', error)
  }

  async #connect(): Promise<void> {
    this.#teardown()
    if (this.#ended) return
    const mine = this.#run
    let keys: CryptoKeyPair
    try {
      keys = (await crypto.subtle.generateKey(
        { ...OAEP, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
        false,
        ['encrypt', 'decrypt'],
      )) as CryptoKeyPair
    } catch (cause) {
      return this.#fail(new ConnectionError('QR login: this runtime cannot make an RSA-OAEP key (WebCrypto)', cause))
    }
    if (mine !== this.#run) return
    const spki = await crypto.subtle.exportKey('spki', keys.publicKey)
    const decrypt = async (text: string) =>
      new Uint8Array(await crypto.subtle.decrypt(OAEP, keys.privateKey, fromB64(text)))
    let ws: WebSocket
    try {
      ws = new WebSocket(`${this.client.baseUrl.replace(/^http/, 'ws')}/remote-auth?v=2`)
    } catch (cause) {
      return this.#fail(new ConnectionError('QR login: the remote-auth socket could not be opened', cause))
    }
    this.#socket = ws
    /** A code was shown on this socket; it ended in a login or a cancel (its close is expected). */
    let shown = false
    let settled = false
    const send = (frame: Record<string, unknown>) => ws.readyState === 1 && ws.send(JSON.stringify(frame))

    ws.addEventListener('message', async (event) => {
      if (mine !== this.#run) return
      let frame: Record<string, unknown>
      try {
        frame = JSON.parse(String(event.data))
      } catch {
        return
      }
      try {
        switch (frame.op) {
          case 'hello':
            this.#heartbeat = setInterval(() => send({ op: 'heartbeat' }), Number(frame.heartbeat_interval) || 41_250)
            send({ op: 'init', encoded_public_key: b64(spki) })
            break
          case 'nonce_proof':
            send({ op: 'nonce_proof', nonce: b64url(await decrypt(String(frame.encrypted_nonce))) })
            break
          case 'pending_remote_init': {
            shown = true
            this.#failures = 0
            const fingerprint = String(frame.fingerprint)
            this.fingerprint = fingerprint
            this.url = `${(this.options.webUrl ?? this.client.baseUrl).replace(/\/+$/, '')}/ra/${fingerprint}`
            this.user = undefined
            this.emit('qr', this.url, fingerprint)
            break
          }
          case 'pending_ticket': {
            const user = parseUser(new TextDecoder().decode(await decrypt(String(frame.encrypted_user_payload))))
            if (user && mine === this.#run && !settled) {
              this.user = user
              this.emit('pendingUser', user)
            }
            break
          }
          case 'pending_login': {
            settled = true
            const { encrypted_token } = await this.client.rest.post('/users/@me/remote-auth/login', {
              auth: false,
              body: { ticket: String(frame.ticket) },
            })
            const token = new TextDecoder().decode(await decrypt(encrypted_token))
            if (mine !== this.#run) return
            this.client.setToken(token)
            const session = { token, userId: this.user?.id ?? (await this.client.rest.get('/users/@me')).id }
            this.#end(session)
            this.emit('done', session)
            break
          }
          case 'cancel':
            settled = true
            this.#end(null)
            this.emit('cancelled')
            break
        }
      } catch (error) {
        settled = true
        this.#fail(
          error instanceof ApiError || error instanceof ConnectionError
            ? error
            : new ConnectionError('QR login: the server sent what could not be decrypted', error),
        )
      }
    })

    ws.addEventListener('close', () => {
      if (mine !== this.#run || settled || this.#ended) return
      clearInterval(this.#heartbeat)
      this.#socket = undefined
      // A code that lived its time is replaced at once; a socket that never showed one waits, longer each time.
      if (shown) {
        if (this.options.renew === false) this.#end(null)
        else this.#retry = setTimeout(() => void this.#connect(), 0)
        this.emit('expired')
        return
      }
      if (this.#failures >= (this.options.retries ?? 5))
        return this.#fail(new ConnectionError(`QR login: the remote-auth socket closed ${this.#failures} times`))
      const delay = RETRY_MS[Math.min(this.#failures++, RETRY_MS.length - 1)]
      this.#retry = setTimeout(() => void this.#connect(), delay)
    })
  }
}

/** A code a logged-in client claimed: the desktop shows this user until approve() or deny(). */
export class RemoteAuthRequest {
  constructor(
    private readonly client: Client,
    readonly fingerprint: string,
    readonly handshakeToken: string,
  ) {}

  /** Log the desktop in (an account with MFA: elevated, through onMfaRequired). */
  async approve(): Promise<void> {
    await this.client.rest.post('/users/@me/remote-auth/finish', {
      body: { handshake_token: this.handshakeToken, temporary_token: false },
    })
  }

  /** Refuse: the desktop hears cancel. */
  async deny(): Promise<void> {
    await this.client.rest.post('/users/@me/remote-auth/cancel', { body: { handshake_token: this.handshakeToken } })
  }
}

export class RemoteAuth {
  constructor(protected readonly client: Client) {}

  /** Desktop: start a QR login (listen to `qr`, `pendingUser`, `done`, `cancelled`, `error`; or await wait()). */
  desktop(options: DesktopLoginOptions = {}): DesktopLogin {
    return new DesktopLogin(this.client, options)
  }

  /** Mobile: claim a scanned code (`https://…/ra/<fingerprint>` or the fingerprint): the desktop shows this user. */
  async scan(fingerprintOrUrl: string): Promise<RemoteAuthRequest> {
    const fingerprint = FINGERPRINT.exec(fingerprintOrUrl)?.[1] ?? fingerprintOrUrl.trim()
    const { handshake_token } = await this.client.rest.post('/users/@me/remote-auth', { body: { fingerprint } })
    return new RemoteAuthRequest(this.client, fingerprint, handshake_token)
  }

  /** Mobile: claim and approve at once. */
  async approve(fingerprintOrUrl: string): Promise<void> {
    await (await this.scan(fingerprintOrUrl)).approve()
  }

  /** Mobile: claim and deny at once. */
  async deny(fingerprintOrUrl: string): Promise<void> {
    await (await this.scan(fingerprintOrUrl)).deny()
  }
}
