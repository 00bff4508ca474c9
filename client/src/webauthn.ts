// WebAuthn assertions for the MFA step and passkey login: the server's options JSON ({publicKey}, base64url fields)
// turned into navigator.credentials.get()'s buffers, and the credential back into the JSON the server verifies (the
// shape SimpleWebAuthn's browser library sends), with no dependency. Outside a browser the app passes an assertion.

/** Signs the server's assertion options (`{"publicKey": …}` JSON) and returns the credential's JSON. */
export type Authenticator = (
  optionsJson: string,
  options: { mediation?: 'conditional' | 'optional' | 'required' | 'silent'; signal?: AbortSignal },
) => Promise<string>

const fromB64url = (text: string): ArrayBuffer => {
  const base64 = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=')
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)).buffer as ArrayBuffer
}
const toB64url = (buffer: ArrayBuffer | null | undefined): string | undefined => {
  if (!buffer) return undefined
  let text = ''
  for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte)
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

type AssertionResponse = {
  clientDataJSON: ArrayBuffer
  authenticatorData: ArrayBuffer
  signature: ArrayBuffer
  userHandle: ArrayBuffer | null
}
type Credentials = { get(options: unknown): Promise<unknown> }

/** Whether this runtime has navigator.credentials (a browser). */
export function hasBrowserWebAuthn(): boolean {
  return typeof (globalThis as { navigator?: { credentials?: Credentials } }).navigator?.credentials?.get === 'function'
}

/** navigator.credentials.get() for the server's options; the credential as the server's JSON. */
export const browserAuthenticator: Authenticator = async (optionsJson, { mediation, signal }) => {
  const credentials = (globalThis as { navigator?: { credentials?: Credentials } }).navigator?.credentials
  if (!credentials) throw new TypeError('WebAuthn needs a browser (navigator.credentials): pass the assertion instead')
  const { publicKey } = JSON.parse(optionsJson) as { publicKey: Record<string, any> }
  const request = {
    ...publicKey,
    challenge: fromB64url(publicKey.challenge),
    allowCredentials: (publicKey.allowCredentials ?? []).map((c: { id: string; type: string }) => ({
      ...c,
      id: fromB64url(c.id),
    })),
  }
  const credential = (await credentials.get({ publicKey: request, mediation, signal })) as {
    id: string
    rawId: ArrayBuffer
    type: string
    authenticatorAttachment?: string | null
    response: AssertionResponse
    getClientExtensionResults?: () => unknown
  } | null
  if (!credential) throw new TypeError('no credential was chosen')
  const r = credential.response
  return JSON.stringify({
    id: credential.id,
    rawId: toB64url(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: toB64url(r.clientDataJSON),
      authenticatorData: toB64url(r.authenticatorData),
      signature: toB64url(r.signature),
      userHandle: toB64url(r.userHandle),
    },
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
  })
}
