// The second-factor step, one object for the three places a server asks for one: a login, a password reset and an
// elevation (60003). It offers exactly the methods the server's answer named, texts the SMS code on request, and
// proves one method; a wrong code (60008) leaves the step usable until the server kills its ticket.
import type { Client } from './client'
import type { MfaMethod } from './errors'

/** The methods a server may offer: the factors, and `password` (an elevation of an account without MFA). */
export type MfaMethodType = 'totp' | 'sms' | 'backup' | 'webauthn' | 'password' | (string & {})

/** Proves `method` with `code` for the step's ticket: what the step's verify() resolves with. */
type Finish<T> = (method: string, code: string) => Promise<T>

export class MfaStep<T> {
  // The server's ticket and its methods are the step's only own fields (an app may log or compare them); the rest is
  // private, so the step reads as the 60003 answer's `mfa` object.
  readonly ticket: string
  readonly methods: MfaMethod[]
  readonly #client: Client
  readonly #finish: Finish<T>
  readonly #userId?: string

  constructor(client: Client, ticket: string, methods: MfaMethod[], finish: Finish<T>, userId?: string) {
    this.ticket = ticket
    this.methods = methods
    this.#client = client
    this.#finish = finish
    this.#userId = userId
  }

  /** The account (a login or a reset step). */
  get userId(): string | undefined {
    return this.#userId
  }

  /** The methods offered, strongest first: ['totp', 'sms', 'backup'], ['webauthn'], ['password'], … */
  get types(): MfaMethodType[] {
    return this.methods.map((m) => m.type)
  }

  /** Whether the server offered this method. */
  has(method: MfaMethodType): boolean {
    return this.methods.some((m) => m.type === method)
  }

  /** The WebAuthn assertion options (`{"publicKey": …}` JSON) to sign, when a security key is offered. */
  get webauthnChallenge(): string | undefined {
    return this.methods.find((m) => m.type === 'webauthn')?.challenge
  }

  /** Text the code of the `sms` method to the account's phone; resolves with the masked number. */
  async sendSms(): Promise<string> {
    this.#offered('sms')
    const answer = await this.#client.rest.post('/auth/mfa/sms/send', { body: { ticket: this.ticket }, auth: false })
    return answer.phone
  }

  /**
   * Prove one method: a code (totp, sms, backup; a backup code is also taken by totp where `backup_codes_allowed`),
   * the password, or for `webauthn` the credential's JSON, or nothing in a browser (navigator.credentials signs).
   */
  async verify(method: MfaMethodType, code?: string): Promise<T> {
    this.#offered(method)
    if (method === 'webauthn' && code === undefined) code = await this.#client.auth.assert(this.webauthnChallenge!, {})
    if (typeof code !== 'string' || !code) throw new TypeError(`verify('${method}'): the code is missing`)
    // Codes are read as typed: "123 456" is 123456 (a password keeps its spaces).
    return this.#finish(method, method === 'password' || method === 'webauthn' ? code : code.replace(/\s+/g, ''))
  }

  #offered(method: string): void {
    if (!this.has(method))
      throw new TypeError(`the server did not offer ${method} (offered: ${this.types.join(', ') || 'none'})`)
  }
}

/** The fields of an MFA login (or reset) answer that are not a factor's. */
const ENVELOPE = new Set(['user_id', 'mfa', 'ticket', 'login_instance_id'])

/** The methods of an MFA login answer (`{ticket, totp: true, sms: false, webauthn: "<options>"…}`), in its order. */
export function methodsOfLogin(body: Record<string, unknown>): MfaMethod[] {
  return Object.entries(body).flatMap(([type, value]): MfaMethod[] => {
    if (ENVELOPE.has(type)) return []
    if (typeof value === 'string') return [{ type, challenge: value }]
    return value === true ? [{ type }] : []
  })
}
