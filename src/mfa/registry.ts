// What the flows ask of the second factors, derived from a list of them (module.ts: factors/index.ts's FACTORS):
// whether MFA is on, the authenticator types, the login answer, a 60003 answer's methods, checking a code for a
// ticket, elevation, removing factors. Nothing here names a factor; the list's order (strongest first) is the order
// of the answers.
import type { MfaRequired } from '../accounts/second-factor'
import { privateUser } from '../accounts/serialize'
import type { UserCaller } from '../core/caller'
import { reserve } from '../core/ratelimit'
import { events, topics } from '../gateway/bus'
import { accountOf } from './caller'
import { ELEVATION_TTL_S, hasElevation } from './elevation-jwt'
import { CODE_ALREADY_USED, elevationRequired } from './errors'
import type { Enrolment, Method, SecondFactor } from './factor'
import { PASSWORD, passwordMethod } from './password'
import { cachedAuthenticatorTypes as authenticatorsOn } from './store'
import { issueTicket, MAX_WRONG_CODES, TICKET_TTL_MS, type TicketPurpose, type TicketRow, wrongCode } from './tickets'

/** Wrong codes per user across tickets, so fresh tickets do not buy more guesses. */
const MFA_FAILURES_PER_USER = { limit: 20, windowMs: 15 * 60_000 }
/** The longest code (or assertion) checked. */
const MAX_CODE_CHARS = 64 * 1024

type TicketOptions = { sessionId?: string; data?: Record<string, string>; ttlMs?: number }
/** A new ticket, what its user has on, and the challenge issued with it (the wire's form), if any. */
type Issued = { ticket: string; on: Enrolment; challenge: string | null }

export type Registry = {
  /** The factors, strongest first. */
  readonly factors: readonly SecondFactor[]
  /** Every method a ticket may be answered with: the factors, then the password (accounts without MFA). */
  readonly methods: readonly Method[]
  /** The factor answering POST /auth/mfa/<type>. */
  factor(type: string): SecondFactor | undefined
  /** MFA is on: a strong factor is enrolled. */
  enabled(userId: string): Promise<boolean>
  /** Discord's authenticator types of the factors on, ascending. */
  authenticatorTypes(userId: string): Promise<readonly number[]>
  /** Both, from one read of the cached authenticator types (GET /users/@me and READY show both). */
  state(userId: string): Promise<{ enabled: boolean; authenticatorTypes: readonly number[] }>
  /** The enrolled factors that prove the account's phone. */
  phoneFactors(userId: string): Promise<SecondFactor[]>
  /** null without MFA; otherwise the "MFA required" login answer with a new ticket of `purpose` carrying `data`. */
  loginChallenge(userId: string, purpose: TicketPurpose, data?: Record<string, string>): Promise<MfaRequired | null>
  /** Check a code of method `type` for the ticket; a wrong one counts against the ticket and the user (60008, 429). */
  verify(row: TicketRow, type: string, code: unknown): Promise<void>
  /** Throws 60003 (a new elevation ticket and the methods) unless the request carries a fresh elevation. */
  requireElevation(caller: UserCaller, request: Request): Promise<void>
  /** After a strong factor went: with none left, MFA is off and the factors that only come on top go too. */
  dropDependents(userId: string): Promise<void>
  /** Remove every factor (account revert). */
  removeAll(userId: string): Promise<void>
  /**
   * USER_UPDATE to the account's sessions (mfa_enabled, the phone), read and given inside the transaction that changed
   * them: it goes out once that commits (with several nodes, an outbox row of it).
   */
  userChanged(userId: string): Promise<void>
}

export function createRegistry(factors: readonly SecondFactor[]): Registry {
  const byType = new Map(factors.map((f) => [f.type, f]))
  const strong = factors.filter((f) => f.strong)
  const registeredTypes = new Set(factors.flatMap((f) => f.authenticatorType ?? []))
  const challengers = factors.filter((f) => f.challenge)
  if (byType.size !== factors.length || byType.has(PASSWORD))
    throw new Error('each second factor has a type of its own, and none is "password"')
  if (challengers.length > 1) throw new Error('a ticket keeps one challenge: only one factor may issue one')
  const challenger = challengers[0]

  // GET /users/@me asks both on every request: one cached read (store.ts authenticatorTypes, the rows of every factor
  // with an authenticator type, which their `enrolled` read too) answers for those factors.
  const strongTypes = strong.flatMap((f) => f.authenticatorType ?? [])
  const strongUntyped = strong.filter((f) => f.authenticatorType === undefined)
  /** The factors of `list` the user has enrolled, in its order. */
  const enrolledOf = async (userId: string, list: readonly SecondFactor[]) => {
    const on: SecondFactor[] = []
    for (const f of list) if (await f.enrolled(userId)) on.push(f)
    return on
  }
  const strongOn = (on: readonly number[]) => strongTypes.some((type) => on.includes(type))
  // Strong factors without a type are asked only when there are some (the usual list has none: no more awaits).
  const untypedOn = async (userId: string) => (await enrolledOf(userId, strongUntyped)).length > 0
  const typesOf = (on: readonly number[]) =>
    on.every((type) => registeredTypes.has(type)) ? on : on.filter((type) => registeredTypes.has(type))
  const enabled = async (userId: string) =>
    strongOn(await authenticatorsOn(userId)) || (strongUntyped.length > 0 && (await untypedOn(userId)))
  const authenticatorTypes = async (userId: string) => typesOf(await authenticatorsOn(userId))
  const state = async (userId: string) => {
    const on = await authenticatorsOn(userId)
    const enabled = strongOn(on) || (strongUntyped.length > 0 && (await untypedOn(userId)))
    return { enabled, authenticatorTypes: typesOf(on) }
  }
  const password = passwordMethod(enabled)

  async function issue(purpose: TicketPurpose, userId: string, options: TicketOptions): Promise<Issued> {
    const on: Enrolment = new Set((await enrolledOf(userId, factors)).map((f) => f.type))
    const challenge = challenger && on.has(challenger.type) ? await challenger.challenge!(userId) : undefined
    const ticket = await issueTicket(purpose, userId, { ...options, challenge: challenge?.ticket })
    return { ticket, on, challenge: challenge?.wire ?? null }
  }

  /** A 60003 answer's methods: each factor's, then the password when no strong factor is on. */
  function methods({ on, challenge }: Issued): Record<string, unknown>[] {
    const list: Record<string, unknown>[] = []
    for (const f of factors) {
      const method = f.method ? f.method(on, challenge) : on.has(f.type) ? { type: f.type } : undefined
      if (method) list.push(method)
    }
    if (!strong.some((f) => on.has(f.type))) list.push({ type: password.type })
    return list
  }

  const methodOf = (type: string): Method | undefined =>
    byType.get(type) ?? (type === password.type ? password : undefined)

  return {
    factors,
    methods: [...factors, password],
    factor: (type) => byType.get(type),
    enabled,
    authenticatorTypes,
    state,
    phoneFactors: (userId) =>
      enrolledOf(
        userId,
        factors.filter((f) => f.onPhone),
      ),

    async loginChallenge(userId, purpose, data = {}) {
      if (!(await enabled(userId))) return null
      const issued = await issue(purpose, userId, { data })
      const body: MfaRequired = { user_id: userId, mfa: true, ticket: issued.ticket }
      for (const f of factors) body[f.type] = f.login ? f.login(issued.on, issued.challenge) : issued.on.has(f.type)
      return body
    },

    async verify(row, type, code) {
      const method = methodOf(type)
      if (!method) throw await wrongCode(row)
      // Counted before the (async) check, so parallel guesses cannot outrun the ticket's or the user's allowance.
      const attempt = await reserve(
        ['mfa-user', row.userId!, MFA_FAILURES_PER_USER],
        ['mfa-ticket', row.ticketHash, { limit: MAX_WRONG_CODES, windowMs: TICKET_TTL_MS }],
      )
      const verdict =
        typeof code === 'string' && code.length > 0 && code.length <= MAX_CODE_CHARS && (await method.verify(row, code))
      if (verdict === 'used') throw await wrongCode(row, CODE_ALREADY_USED)
      if (!verdict) throw await wrongCode(row, method.wrongCode)
      attempt.release()
    },

    async requireElevation(caller, request) {
      if (await hasElevation(caller, request)) return
      const issued = await issue('elevate', caller.userId, {
        sessionId: caller.sessionId,
        ttlMs: ELEVATION_TTL_S * 1000,
      })
      throw elevationRequired({ ticket: issued.ticket, methods: methods(issued) })
    },

    async dropDependents(userId) {
      if (await enabled(userId)) return
      for (const f of factors) if (!f.strong) await f.remove(userId)
    },

    async removeAll(userId) {
      for (const f of factors) await f.remove(userId)
    },

    async userChanged(userId) {
      events.publish(topics.account(userId), 'USER_UPDATE', privateUser(await accountOf(userId), await enabled(userId)))
    },
  }
}
