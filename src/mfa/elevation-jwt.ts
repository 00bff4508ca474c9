// MFA elevation ("sudo"): a sensitive request without fresh proof gets 401 60003 with a ticket and methods
// (registry.ts requireElevation); POST /mfa/finish turns a code into a 5-minute HS512 JWT bound to the user and the
// session, which the retry carries in X-Service-MFA-Authorization (or X-Discord-MFA-Authorization) or the
// __Secure-recent_mfa cookie. This file: the JWT, its cookie, and finding a valid one on a request.
import { jwtVerify, SignJWT } from 'jose'
import type { UserCaller } from '../core/caller'
import { clock } from '../core/clock'
import { getSecret } from '../db/secrets'
import { cookieValue } from '../http/cookies'

export const ELEVATION_TTL_S = 300
export const ELEVATION_COOKIE = '__Secure-recent_mfa'
const ISSUER = 'urn:service-api'
const AUDIENCE = 'urn:service-mfa-reprompt'

const key = async () => new Uint8Array(await getSecret('mfa-elevation'))

export async function signElevation(caller: UserCaller): Promise<string> {
  const now = clock.seconds()
  return new SignJWT({ sid: caller.sessionIdHash })
    .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(caller.userId)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + ELEVATION_TTL_S)
    .sign(await key())
}

/** Whether the JWT is ours (HS512 only), unexpired, and for this user and this session. */
async function isElevated(caller: UserCaller, jwt: string | undefined | null): Promise<boolean> {
  if (!jwt || jwt.length > 2048) return false
  try {
    const { payload } = await jwtVerify(jwt, await key(), {
      algorithms: ['HS512'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: clock.date(),
    })
    return payload.sub === caller.userId && payload.sid === caller.sessionIdHash
  } catch {
    return false
  }
}

/** The cookie /mfa/finish sets: the JWT, for this site only, as long as it lives. */
export const elevationCookie = (jwt: string) =>
  `${ELEVATION_COOKIE}=${jwt}; Max-Age=${ELEVATION_TTL_S}; Path=/; HttpOnly; Secure; SameSite=Strict`

/** Whether the request carries a valid elevation JWT for this caller (either header, or the cookie). */
export async function hasElevation(caller: UserCaller, request: Request): Promise<boolean> {
  const candidates = [
    request.headers.get('x-service-mfa-authorization'),
    request.headers.get('x-discord-mfa-authorization'),
    cookieValue(request, ELEVATION_COOKIE),
  ]
  for (const jwt of candidates) if (await isElevated(caller, jwt)) return true
  return false
}
