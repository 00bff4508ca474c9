// Who may enter the console, checked by every admin route before anything else: a state-changing request from
// another site is refused, then anyone but an operator gets 403, then an operator without MFA is told to enable it,
// then a request without a recent elevation (5 minutes, the 60003 flow) gets 60003 with a ticket.
import { config } from '../config'
import type { UserCaller } from '../core/caller'
import { mfaEnabled } from '../mfa/factors'
import { requireElevation } from '../mfa/elevation'
import { crossSite, notOperator, operatorNeedsMfa } from './errors'
import { findOperator } from './store'

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * A browser names the page that sent a request (Origin, Sec-Fetch-Site): a console action must come from the
 * console's own origin. Clients that are not browsers send neither and are judged by their token alone.
 */
export function refuseCrossSite(request: Request): void {
  if (SAFE.has(request.method)) return
  const site = request.headers.get('sec-fetch-site')
  if (site && site !== 'same-origin' && site !== 'none') throw crossSite()
  const origin = request.headers.get('origin')
  if (!origin) return
  const allowed = new Set([
    new URL(request.url).origin,
    new URL(config().webUrl).origin,
    new URL(config().baseUrl).origin,
  ])
  if (!allowed.has(origin)) throw crossSite()
}

/** The operator check alone (GET /admin/@me: the console's first question, before any elevation). */
export async function requireOperator(caller: UserCaller, request: Request): Promise<void> {
  refuseCrossSite(request)
  if (!(await findOperator(caller.userId))) throw notOperator()
}

/** Every other console route: an operator, with MFA on, elevated within the last five minutes. */
export async function requireConsole(caller: UserCaller, request: Request): Promise<void> {
  await requireOperator(caller, request)
  if (!(await mfaEnabled(caller.userId))) throw operatorNeedsMfa()
  await requireElevation(caller, request)
}
