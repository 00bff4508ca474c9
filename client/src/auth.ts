// Accounts: login (e-mail or phone + password) with its MFA step, passkey login, registration, e-mail verification,
// forgot/reset (with its MFA step), logout, sessions, handoff, and MFA elevation (a 60003 answered through the app's
// onMfaRequired, then the call repeated once with X-Service-MFA-Authorization). A login, a registration, a reset or
// a handoff keeps its token in the client's token store: the next call is that user's.
import type { Client } from './client'
import { ApiError, type MfaRequired } from './errors'
import { MfaStep, methodsOfLogin, type MfaMethodType } from './mfa'
import type { RouteBody } from './routes'
import { type Authenticator, browserAuthenticator } from './webauthn'

/** A logged-in session: the user token (now the client's) and its user. */
export type Session = {
  token: string
  userId: string
  /** What the user must do first, e.g. ['update_password'] (a password the current policy refuses). */
  requiredActions?: string[]
}

/** A login's (or a reset's) answer: the session, or the second factor it still needs. */
export type LoginStep =
  | (Session & { mfa?: undefined })
  | { mfa: MfaStep<Session>; token?: undefined; userId?: undefined }

/** What an app's onMfaRequired answers: a method and its code (none: WebAuthn in a browser). */
export type MfaAnswer = { method: MfaMethodType; code?: string }

/**
 * Asked once when a call is answered 60003 (a sensitive operation wants a fresh proof). It gets the step (its `types`:
 * the methods offered; `sendSms()`; `webauthnChallenge`) and answers a method and code, or the JWT of
 * `await mfa.verify(…)`, or nothing to give up (the call then throws the 60003 ApiError).
 */
export type ElevationHandler = (
  mfa: MfaStep<string>,
) => Promise<MfaAnswer | string | null | undefined> | MfaAnswer | string | null | undefined

export type LoginOptions = {
  /** E-mail address or phone number (E.164, "+15555550123"). */
  login: string
  password: string
  /** Log in to a disabled (or scheduled for deletion) account, and so restore it. */
  undelete?: boolean
  /** Where the login came from (Discord's login_source: 'guild_invite', 'gift', …). */
  loginSource?: NonNullable<RouteBody<'post', '/auth/login'>['login_source']>
}

export type RegisterOptions = {
  email?: string
  password?: string
  /** 2-32 of a-z, 0-9, _ and . ; left out: one is made from globalName. */
  username?: string
  globalName?: string
  /** YYYY-MM-DD, at least 13 years ago. */
  dateOfBirth?: string
  /**
   * The user's agreement to the terms. Required where `locationMetadata().consentRequired` (the EU, the UK, and any
   * address the server cannot place): without it there the server answers 50035 with a `consent` field error.
   */
  consent?: boolean
  /** The promotional e-mail box; `locationMetadata().promotionalEmailOptIn` says whether to show it pre-checked. */
  promotionalEmailOptIn?: boolean
  /** A verified phone instead of (or with) the e-mail: from verifyPhone(). */
  phoneToken?: string
  invite?: string
  fingerprint?: string
}

export type LocationMetadata = {
  countryCode: string
  consentRequired: boolean
  promotionalEmailOptIn: { required: boolean; preChecked: boolean }
}

export type AuthSession = {
  idHash: string
  lastUsed: Date
  clientInfo: { os: string | null; platform: string | null; location: string | null }
  /** This client's own session (known once currentSessionHash() could ask the Gateway). */
  current: boolean
}

type LoginAnswer = { user_id: string; token?: string; mfa?: boolean; ticket?: string; required_actions?: string[] }

export class Auth {
  /** Signs WebAuthn challenges: navigator.credentials in a browser; elsewhere set one (or pass assertions). */
  authenticator: Authenticator = browserAuthenticator
  #onMfaRequired?: ElevationHandler
  #sessionHash?: { token: string; hash: string | null }

  constructor(
    protected readonly client: Client,
    onMfaRequired?: ElevationHandler,
  ) {
    this.onMfaRequired = onMfaRequired
  }

  /** The app's answer to 60003 (also `new Client({ onMfaRequired })`); undefined: a 60003 is thrown as it is. */
  get onMfaRequired(): ElevationHandler | undefined {
    return this.#onMfaRequired
  }
  set onMfaRequired(handler: ElevationHandler | undefined) {
    this.#onMfaRequired = handler
    this.client.rest.onMfaRequired = handler ? (mfa) => this.elevate(mfa) : undefined
  }

  /** Log in with e-mail or phone and password: the session, or `{ mfa }` to finish with a second factor. */
  async login(options: LoginOptions): Promise<LoginStep> {
    const answer = (await this.client.rest.post('/auth/login', {
      auth: false,
      body: {
        login: options.login,
        password: options.password,
        ...(options.undelete ? { undelete: true } : {}),
        ...(options.loginSource ? { login_source: options.loginSource } : {}),
      },
    })) as LoginAnswer
    return this.#stepOf(answer, (type, code) =>
      this.client.rest.post(`/auth/mfa/${type}`, { auth: false, body: { ticket: answer.ticket!, code } }),
    )
  }

  /**
   * Passwordless login with a passkey (a discoverable WebAuthn credential). In a browser, `conditional: true` waits
   * for the user to pick a passkey from the login field's autofill (`autocomplete="username webauthn"`), and
   * `signal` ends the wait; elsewhere pass `credential` (the assertion JSON for `challenge`).
   */
  async loginWithPasskey(
    options: {
      conditional?: boolean
      signal?: AbortSignal
      /** Signs the challenge: the assertion JSON (tests, native apps). Default: this.authenticator. */
      sign?: (challenge: string) => Promise<string> | string
    } = {},
  ): Promise<Session> {
    const start = (await this.client.rest.post('/auth/conditional/start', { auth: false })) as {
      ticket?: string
      challenge?: string
    }
    const credential = options.sign
      ? await options.sign(start.challenge!)
      : await this.assert(start.challenge!, {
          mediation: options.conditional ? 'conditional' : undefined,
          signal: options.signal,
        })
    const answer = await this.client.rest.post('/auth/conditional/finish', {
      auth: false,
      body: { ticket: start.ticket!, credential },
    })
    return this.#keep(answer.token, answer.user_id, answer.required_actions)
  }

  /** Create an account and log in. The consent rules: see RegisterOptions.consent and locationMetadata(). */
  async register(options: RegisterOptions): Promise<Session> {
    const body = {
      email: options.email,
      password: options.password,
      username: options.username,
      global_name: options.globalName,
      date_of_birth: options.dateOfBirth,
      consent: options.consent,
      promotional_email_opt_in: options.promotionalEmailOptIn,
      phone_token: options.phoneToken,
      invite: options.invite,
      fingerprint: options.fingerprint,
    }
    const { token } = await this.client.rest.post('/auth/register', { auth: false, body: defined(body) })
    // The answer names no user: ask with the new token (before it becomes the client's, so a failure leaves none).
    const me = await this.client.rest.get('/users/@me', { auth: token })
    return this.#keep(token, me.id)
  }

  /** Whether this client's address must consent at registration, and how to show the promotional e-mail box. */
  async locationMetadata(): Promise<LocationMetadata> {
    const m = await this.client.rest.get('/auth/location-metadata', { auth: false })
    return {
      countryCode: m.country_code,
      consentRequired: m.consent_required,
      promotionalEmailOptIn: {
        required: m.promotional_email_opt_in.required,
        preChecked: m.promotional_email_opt_in.pre_checked,
      },
    }
  }

  /** Follow the verification e-mail's link (its `#token=`): the address is verified and the user logged in. */
  async verifyEmail(token: string): Promise<Session> {
    const answer = await this.client.rest.post('/auth/verify', { auth: false, body: { token } })
    return this.#keep(answer.token, answer.user_id)
  }

  /** Text a registration code to a phone (then verifyPhone). */
  async sendPhoneCode(phone: string): Promise<void> {
    await this.client.rest.post('/auth/register/phone', { auth: false, body: { phone } })
  }

  /** A texted code (registration, a reset by phone) → the phone token that registration or reset() takes. */
  async verifyPhone(phone: string, code: string): Promise<string> {
    const answer = await this.client.rest.post('/phone-verifications/verify', {
      auth: false,
      body: { phone, code: code.replace(/\s+/g, '') },
    })
    return answer.token
  }

  /**
   * Forgot the password: an e-mail gets a reset link (its `#token=` is reset()'s token; the answer is the same whether
   * the account exists or not); a phone gets a code (verifyPhone turns it into the token), unless the phone is the
   * account's second factor: then the link goes by e-mail.
   */
  async forgot(login: string): Promise<{ via: 'email' | 'sms' }> {
    try {
      await this.client.rest.post('/auth/forgot', { auth: false, body: { login } })
      return { via: 'email' }
    } catch (error) {
      if (error instanceof ApiError && error.code === 70007) return { via: 'sms' }
      if (error instanceof ApiError && error.code === 70009) return { via: 'email' }
      throw error
    }
  }

  /** Whether a reset token would still be taken (without spending it). */
  async checkResetToken(token: string): Promise<boolean> {
    try {
      await this.client.rest.post('/auth/reset/check', { auth: false, body: { token } })
      return true
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return false
      throw error
    }
  }

  /**
   * Set a new password with a reset token (the link's, or verifyPhone's): the session (every other session of the
   * account ends), or `{ mfa }` when the account has a second factor, whose verify() finishes the reset.
   */
  async reset(options: { token: string; password: string }): Promise<LoginStep> {
    const { token, password } = options
    const first = (await this.client.rest.post('/auth/reset', { body: { token, password } })) as LoginAnswer
    return this.#stepOf(
      first,
      async (method, code) =>
        (await this.client.rest.post('/auth/reset', {
          body: { token, password, ticket: first.ticket, method, code },
        })) as { token: string },
    )
  }

  /** End this session on the server and forget its token (forgotten even when the server could not be told). */
  async logout(): Promise<void> {
    try {
      if (this.client.token && !this.client.tokenKind) await this.client.rest.post('/auth/logout', { body: {} })
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) throw error
    } finally {
      this.client.setToken(null)
    }
  }

  /** The account's sessions, most recently used first (up to 50), this one marked. */
  async sessions(): Promise<AuthSession[]> {
    const [{ user_sessions }, current] = await Promise.all([
      this.client.rest.get('/auth/sessions'),
      this.currentSessionHash(),
    ])
    return user_sessions.map((s) => ({
      idHash: s.id_hash,
      lastUsed: new Date(s.approx_last_used_time),
      clientInfo: s.client_info,
      current: s.id_hash === current,
    }))
  }

  /** End sessions by their idHash (an elevated call: onMfaRequired is asked). */
  async logoutSessions(idHashes: string[]): Promise<void> {
    if (!idHashes.length) return
    await this.client.rest.post('/auth/sessions/logout', { body: { session_id_hashes: idHashes } })
  }

  /** End every session of the account but this one; resolves with how many there were. */
  async logoutOtherSessions(): Promise<number> {
    const current = await this.currentSessionHash()
    if (!current) throw new TypeError('the current session could not be told apart (the Gateway did not answer)')
    const others = (await this.sessions()).filter((s) => s.idHash !== current).map((s) => s.idHash)
    for (let i = 0; i < others.length; i += 64) await this.logoutSessions(others.slice(i, i + 64))
    return others.length
  }

  /**
   * The idHash of this client's session, as the Gateway's READY names it (`auth_session_id_hash`): REST does not say
   * which session a token is. One short Gateway connection per token; null when it could not be asked.
   */
  async currentSessionHash(timeoutMs = 5000): Promise<string | null> {
    const token = this.client.token
    if (!token || this.client.tokenKind) return null
    if (this.#sessionHash?.token === token) return this.#sessionHash.hash
    const hash = await readyHash(this.client.baseUrl, token, timeoutMs)
    if (hash) this.#sessionHash = { token, hash }
    return hash
  }

  /** Handoff, the sending side: a one-use token (5 minutes, this IP) for `key`, which the other client made. */
  async createHandoff(key: string): Promise<string> {
    return (await this.client.rest.post('/auth/handoff', { body: { key } })).handoff_token
  }

  /** Handoff, the receiving side: its key and the token the logged-in client made for it → a session of its own. */
  async exchangeHandoff(key: string, handoffToken: string): Promise<Session> {
    const answer = await this.client.rest.post('/auth/handoff/exchange', {
      auth: false,
      body: { key, handoff_token: handoffToken },
    })
    return this.#keep(answer.token, answer.user.id)
  }

  /** A random handoff key (32 bytes, base64url) for exchangeHandoff. */
  newHandoffKey(): string {
    return base64url(crypto.getRandomValues(new Uint8Array(32)))
  }

  /** Sign a WebAuthn challenge with `authenticator`. */
  assert(challenge: string, options: Parameters<Authenticator>[1]): Promise<string> {
    return this.authenticator(challenge, options)
  }

  /** A 60003: the app's handler answers the step; its method and code are proved at POST /mfa/finish (the JWT). */
  protected async elevate(raw: MfaRequired): Promise<string | undefined> {
    const handler = this.#onMfaRequired
    if (!handler || !raw?.ticket) return undefined
    const step = new MfaStep<string>(this.client, raw.ticket, raw.methods ?? [], async (method, code) => {
      const body = { ticket: raw.ticket, mfa_type: method, data: code }
      return (await this.client.rest.post('/mfa/finish', { body, elevate: false })).token
    })
    const answer = await handler(step)
    if (!answer) return undefined
    return typeof answer === 'string' ? answer : await step.verify(answer.method, answer.code)
  }

  /** A login-like answer: kept as the session, or an MFA step whose `finish` answers `{token, …}`. */
  #stepOf(
    answer: LoginAnswer,
    finish: (method: string, code: string) => Promise<{ token: string; required_actions?: string[] }>,
  ): LoginStep {
    if (!answer.mfa) return this.#keep(answer.token!, answer.user_id, answer.required_actions)
    const methods = methodsOfLogin(answer as unknown as Record<string, unknown>)
    const mfa = new MfaStep<Session>(
      this.client,
      answer.ticket!,
      methods,
      async (method, code) => {
        const done = await finish(method, code)
        return this.#keep(done.token, answer.user_id, done.required_actions)
      },
      answer.user_id,
    )
    return { mfa }
  }

  #keep(token: string, userId: string, requiredActions?: string[]): Session {
    this.client.setToken(token)
    return { token, userId, ...(requiredActions?.length ? { requiredActions } : {}) }
  }
}

function defined<T extends Record<string, unknown>>(body: T): T {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as T
}

function base64url(bytes: Uint8Array): string {
  let text = ''
  for (const byte of bytes) text += String.fromCharCode(byte)
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** Identify once on the Gateway and read READY's auth_session_id_hash. */
function readyHash(baseUrl: string, token: string, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    let socket: WebSocket
    try {
      socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/gateway?v=10&encoding=json`)
    } catch {
      return resolve(null)
    }
    const done = (hash: string | null) => {
      clearTimeout(timer)
      resolve(hash)
      if (socket.readyState <= 1) socket.close(1000)
    }
    const timer = setTimeout(() => done(null), timeoutMs)
    socket.addEventListener('message', (event) => {
      let frame: { op?: number; t?: string; d?: { auth_session_id_hash?: unknown } }
      try {
        frame = JSON.parse(String(event.data))
      } catch {
        return done(null)
      }
      if (frame.op === 10)
        socket.send(
          JSON.stringify({
            op: 2,
            d: { token, properties: { os: 'sdk', browser: 'lobby-client', device: '' }, intents: 0 },
          }),
        )
      else if (frame.op === 0 && frame.t === 'READY')
        done(typeof frame.d?.auth_session_id_hash === 'string' ? frame.d.auth_session_id_hash : null)
    })
    socket.addEventListener('error', () => done(null))
    socket.addEventListener('close', () => done(null))
  })
}
