// MFA test helpers: TOTP codes from the test's clock, enrolment shortcuts, elevation, and a software WebAuthn
// authenticator (P-256, "none" attestation) that answers the server's real options.
import { encodeCBOR } from '@levischuck/tiny-cbor'
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { expect } from 'bun:test'
import { lastSmsCode } from '../auth/helpers'
import { api, makeUser } from '../helpers'

export function newSecret(bytes = 20): string {
  return new Secret({ size: bytes }).base32
}

/** The TOTP code for the current (test) clock, `steps` periods away. */
export function totpCode(secret: string, steps = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 })
  return totp.generate({ timestamp: clock.now() + steps * 30_000 })
}

/** A user with TOTP enabled: its new token, secret and backup codes. */
export async function userWithTotp() {
  const user = await makeUser()
  const secret = newSecret()
  const r = await api('POST', '/users/@me/mfa/totp/enable', {
    token: user.token,
    body: { secret, code: totpCode(secret), password: user.password },
  })
  if (r.status !== 200) throw new Error(`enable failed: ${JSON.stringify(r.body)}`)
  clock.advance(30_000) // the enrolment code's step is used up
  return {
    ...user,
    token: r.body.token as string,
    secret,
    backupCodes: (r.body.backup_codes as { code: string }[]).map((c) => c.code),
  }
}

/** Log in with a password and return the MFA ticket body. */
export async function mfaTicket(user: { email: string; password: string }) {
  const r = await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })
  if (!r.body.ticket) throw new Error(`no ticket: ${JSON.stringify(r.body)}`)
  return r.body
}

/** Run a sensitive request; on 60003 prove `type` with `data(methods)` and retry with the JWT. */
export async function elevated(
  method: string,
  path: string,
  token: string,
  body: unknown,
  type: string,
  data: (mfa: any) => string,
) {
  const first = await api(method, path, { token, body })
  if (first.status !== 401 || first.body.code !== 60003)
    return { first, retry: first, jwt: undefined as string | undefined }
  const finish = await api('POST', '/mfa/finish', {
    token,
    body: { ticket: first.body.mfa.ticket, mfa_type: type, data: data(first.body.mfa) },
  })
  const jwt = finish.body.token as string
  const retry = await api(method, path, { token, body, headers: { 'x-service-mfa-authorization': jwt } })
  return { first, finish, retry, jwt }
}

/** PATCH /users/@me {email}, elevated by the password: the 200 answer. */
export async function changeEmail(user: { token: string; password: string }, email: string) {
  const { retry } = await elevated(
    'PATCH',
    '/users/@me',
    user.token,
    { email, password: user.password },
    'password',
    () => user.password,
  )
  expect(retry.status).toBe(200)
  return retry
}

const b64url = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url')
const sha256 = (b: Uint8Array | Buffer | string) => createHash('sha256').update(b).digest()

/** A software authenticator: one credential, a signature counter, user presence and verification flags. */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16)
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  counter = 0
  userHandle?: string

  constructor(
    readonly origin = new URL(config().webUrl).origin,
    readonly rpId = new URL(config().webUrl).hostname,
  ) {}

  private cose(): Uint8Array {
    const jwk = (this.keys.publicKey as KeyObject).export({ format: 'jwk' })
    const map = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ])
    return encodeCBOR(map as never)
  }

  private authData(flags: number, attested: boolean): Buffer {
    const count = Buffer.alloc(4)
    count.writeUInt32BE(this.counter)
    const parts = [sha256(this.rpId), Buffer.from([flags]), count]
    if (attested) {
      const len = Buffer.alloc(2)
      len.writeUInt16BE(this.credentialId.length)
      parts.push(Buffer.alloc(16), len, this.credentialId, Buffer.from(this.cose()))
    }
    return Buffer.concat(parts)
  }

  /** navigator.credentials.create() for the server's options JSON ({publicKey}); returns the stringified response. */
  register(optionsJson: string, { origin = this.origin } = {}): string {
    const { publicKey } = JSON.parse(optionsJson)
    this.userHandle = publicKey.user.id
    const clientData = Buffer.from(
      JSON.stringify({ type: 'webauthn.create', challenge: publicKey.challenge, origin, crossOrigin: false }),
    )
    const attestation = encodeCBOR(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', this.authData(0x45, true)],
      ]) as never,
    )
    return JSON.stringify({
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        attestationObject: b64url(attestation),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    })
  }

  /** navigator.credentials.get(): signs the options' challenge; `counterStep` 0 replays the counter. */
  assert(
    optionsJson: string,
    {
      uv = true,
      up = true,
      counterStep = 1,
      origin = this.origin,
      challenge,
    }: { uv?: boolean; up?: boolean; counterStep?: number; origin?: string; challenge?: string } = {},
  ): string {
    const { publicKey } = JSON.parse(optionsJson)
    this.counter += counterStep
    const authData = this.authData((up ? 0x01 : 0) | (uv ? 0x04 : 0), false)
    const clientData = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: challenge ?? publicKey.challenge, origin, crossOrigin: false }),
    )
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.keys.privateKey)
    return JSON.stringify({
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: this.userHandle,
      },
      clientExtensionResults: {},
    })
  }
}

/** A user with a registered security key. */
export async function userWithKey() {
  const user = await makeUser()
  const key = new SoftAuthenticator()
  const start = await api('POST', '/users/@me/mfa/webauthn/credentials', { token: user.token })
  const finish = await api('POST', '/users/@me/mfa/webauthn/credentials', {
    token: user.token,
    body: { ticket: start.body.ticket, name: 'My key', credential: key.register(start.body.challenge) },
  })
  if (finish.status !== 200) throw new Error(`key registration failed: ${JSON.stringify(finish.body)}`)
  return { ...user, key, credential: finish.body }
}

export const uniquePhone = () => `+1558${Math.floor(1e6 + Math.random() * 8.99e6)}`

/** Verify a phone for the user through the real endpoints. */
export async function addPhone(user: { token: string; password: string }, phone = uniquePhone()) {
  expect((await api('POST', '/users/@me/phone', { token: user.token, body: { phone } })).status).toBe(204)
  const verified = await api('POST', '/phone-verifications/verify', { body: { phone, code: await lastSmsCode(phone) } })
  const r = await api('POST', '/users/@me/phone', {
    token: user.token,
    body: { phone_token: verified.body.token, password: user.password },
  })
  expect(r.status).toBe(204)
  return phone
}
