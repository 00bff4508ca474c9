// OIDC ID tokens of an application's identity provider (POST /partner-sdk/token, external_auth_type OIDC): the
// issuer's discovery document and JWKS fetched under the SSRF guard (fetch-json.ts), kept, and fetched again when a
// token names a key they lack (at most once per 30 s per issuer: a flood of made-up `kid`s costs the issuer nothing);
// the token verified with jose: an asymmetric algorithm only (no `none`, no HMAC: a token "signed" with the public key
// as an HMAC secret is refused before any key is chosen), signature, `iss`, `aud`, `exp`, `iat` at most a week old.
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  type JSONWebKeySet,
  jwtVerify,
} from 'jose'
import { config } from '../config'
import { appState } from '../core/app'
import { clock } from '../core/clock'
import { ProvisionalErrors } from './errors'
import { FetchFailed, fetchJson } from './fetch-json'
import type { ExternalAuthProviderRow } from './tables'

/** JWS algorithms an ID token may use: public-key ones only. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const WEEK_MS = 7 * 24 * 3600_000
/** Clock skew allowed between the issuer and this server. */
const SKEW_S = 60
const DISCOVERY_TTL_MS = 3600_000
const JWKS_TTL_MS = 10 * 60_000
const REFETCH_COOLDOWN_MS = 30_000

type KeySet = ReturnType<typeof createLocalJWKSet>
type IssuerState = {
  jwksUri?: string
  discoveredAt: number
  keys?: KeySet
  keysAt: number
  /** One fetch at a time per issuer: concurrent exchanges wait for it. */
  fetching?: Promise<boolean>
}

const newOidcIssuers = () => ({ issuers: new Map<string, IssuerState>() })
declare module '../core/app' {
  interface AppState {
    oidcIssuers: ReturnType<typeof newOidcIssuers>
  }
}
const held = appState('oidcIssuers', newOidcIssuers)

export type VerifiedIdentity = { issuer: string; subject: string; preferredUsername?: string }

/** Verify an ID token against the application's providers; the identity it proves, or a 5300xx error. */
export async function verifyIdToken(providers: ExternalAuthProviderRow[], token: string): Promise<VerifiedIdentity> {
  const oidc = providers.filter((p) => p.type === 'oidc')
  if (oidc.length === 0) throw ProvisionalErrors.notConfigured('OIDC')
  let alg: unknown
  let iss: unknown
  try {
    alg = decodeProtectedHeader(token).alg
    iss = decodeJwt(token).iss
  } catch {
    throw ProvisionalErrors.badJwt()
  }
  if (typeof alg !== 'string' || !ALGORITHMS.includes(alg)) throw ProvisionalErrors.badJwt()
  const provider = oidc.find((p) => p.issuer === iss)
  if (!provider) throw ProvisionalErrors.badIssuer()
  const state = held().issuers.get(provider.issuer) ?? { discoveredAt: 0, keysAt: 0 }
  held().issuers.set(provider.issuer, state)
  if (!state.keys || clock.now() - state.keysAt > JWKS_TTL_MS) await refresh(provider.issuer, state, !state.keys)
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    payload = (await verify(token, provider, state.keys!)).payload
  } catch (error) {
    if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw mapped(error)
    // A key the set lacks: the issuer may have rotated. Fetch again, unless it was fetched a moment ago.
    if (clock.now() - state.keysAt < REFETCH_COOLDOWN_MS) throw ProvisionalErrors.badJwt()
    // The issuer down while the token names a key it lacks: say so (530009), not "bad token".
    if (!(await refresh(provider.issuer, state, true))) throw ProvisionalErrors.noJwks()
    try {
      payload = (await verify(token, provider, state.keys!)).payload
    } catch (again) {
      throw mapped(again)
    }
  }
  const now = clock.now()
  if (typeof payload.iat !== 'number') throw ProvisionalErrors.badJwt()
  if (payload.iat * 1000 > now + SKEW_S * 1000) throw ProvisionalErrors.badJwt()
  if (now - payload.iat * 1000 > WEEK_MS) throw ProvisionalErrors.tooOld()
  const subject = payload.sub
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 255) throw ProvisionalErrors.badJwt()
  const name = typeof payload.preferred_username === 'string' ? payload.preferred_username.trim() : ''
  return {
    issuer: provider.issuer,
    subject,
    ...(name.length >= 1 && name.length <= 32 ? { preferredUsername: name } : {}),
  }
}

function verify(token: string, provider: ExternalAuthProviderRow, keys: KeySet) {
  return jwtVerify(token, keys, {
    algorithms: ALGORITHMS,
    issuer: provider.issuer,
    audience: provider.audience,
    requiredClaims: ['exp', 'iat', 'sub'],
    clockTolerance: SKEW_S,
    currentDate: new Date(clock.now()),
  })
}

/** jose's verdicts as Discord's codes. */
function mapped(error: unknown) {
  if (error instanceof joseErrors.JWTExpired) return ProvisionalErrors.expired()
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return ProvisionalErrors.badIssuer()
    if (error.claim === 'aud') return ProvisionalErrors.badAudience()
  }
  return ProvisionalErrors.badJwt()
}

/**
 * Fetch the issuer's discovery document (when older than an hour, or `rediscover`) and its JWKS. Keys already held
 * stay in use when a later fetch fails; with none, the failure is the answer (530008 for the discovery document, 530009
 * for the JWKS).
 */
async function refresh(issuer: string, state: IssuerState, rediscover: boolean): Promise<boolean> {
  state.fetching ??= (async () => {
    try {
      const timeout = config().externalAuthTimeoutMs
      const started = performance.now()
      const left = () => Math.max(1, timeout - (performance.now() - started))
      if (rediscover || !state.jwksUri || clock.now() - state.discoveredAt > DISCOVERY_TTL_MS) {
        let uri: unknown
        try {
          const doc = (await fetchJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, timeout)) as {
            issuer?: unknown
            jwks_uri?: unknown
          }
          // OpenID Connect Discovery 4.3: the document names the issuer it was asked for, exactly.
          if (doc?.issuer === issuer) uri = doc.jwks_uri
        } catch (error) {
          if (!(error instanceof FetchFailed) && !(error instanceof SyntaxError)) throw error
        }
        if (typeof uri !== 'string' || !URL.canParse(uri)) {
          if (!state.keys) throw ProvisionalErrors.noOidcConfiguration()
          return false
        }
        state.jwksUri = uri
        state.discoveredAt = clock.now()
      }
      try {
        const set = (await fetchJson(state.jwksUri, left())) as JSONWebKeySet
        if (!set || !Array.isArray(set.keys)) throw new FetchFailed('not a JWKS')
        state.keys = createLocalJWKSet(set)
        state.keysAt = clock.now()
        return true
      } catch (error) {
        if (
          !(error instanceof FetchFailed) &&
          !(error instanceof SyntaxError) &&
          !(error instanceof joseErrors.JOSEError)
        )
          throw error
        if (!state.keys) throw ProvisionalErrors.noJwks()
        return false
      }
    } finally {
      state.fetching = undefined
    }
  })()
  return await state.fetching
}

/** Tests: forget what was fetched of every issuer. */
export function forgetIssuers(): void {
  held().issuers.clear()
}
