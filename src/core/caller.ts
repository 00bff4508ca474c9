// Who is calling: a user session, an application's bot, or an OAuth2 grant. IDs only; domains load what they need.
// The domains that own the tokens register how a token resolves (app.ts wires them), so http/ and gateway/
// resolve tokens without importing any domain.
import { appState } from './app'
import { clock } from './clock'
import { Lru } from './lru'

export type UserCaller = { kind: 'user'; userId: string; sessionId: string; sessionIdHash: string }
export type BotCaller = {
  kind: 'bot'
  userId: string
  applicationId: string
  /** The intents its Gateway session identified with (only on a session's caller; the Gateway ignores most). */
  intents?: number
}
export type BearerCaller = {
  kind: 'bearer'
  userId: string
  applicationId: string
  scopes: string[]
  /** The access token's row. */
  grantId: string
  /** The token family (a code's exchange and its refreshes): what a revocation ends. */
  familyId: string
  /**
   * The server's own web client (oauth2/first-party.ts), issued from a user session: it reads and posts in every lobby
   * its user is a member of, whichever application's, as the user's own client does (lobbies/access.ts).
   */
  firstParty?: true
}
export type Caller = UserCaller | BotCaller | BearerCaller
export type CallerKind = Caller['kind']

/** A token's caller and the clock time (ms) up to which that answer may be reused without asking the domain again. */
export type Resolved<C extends Caller> = { caller: C; until: number }
/** Asked on a token-cache miss: the domain's store answers (a promise). */
export type TokenResolver<C extends Caller> = (
  token: string,
) => Resolved<C> | undefined | Promise<Resolved<C> | undefined>

const resolvers: {
  user?: TokenResolver<UserCaller>
  bot?: TokenResolver<BotCaller>
  bearer?: TokenResolver<BearerCaller>
} = {}

export function setTokenResolvers(next: typeof resolvers): void {
  Object.assign(resolvers, next)
}

// Token -> caller answers, so that a request does not hash its token and read the database to learn who it is. A
// bounded Map (core/lru.ts). Only successful answers are kept (a flood of wrong tokens cannot fill it). Every store
// write that could end a token's life (sessions deleted, the user row changed, a refresh token spent, a token family
// revoked) calls forgetCallers() in the same process (again when its write transaction ends: db/cache.ts
// forgetThrough); for writes by another process (the CLI) the guard is asked before every lookup (db/cache.ts
// checkForeignCommits, which calls forgetCallers when another process committed). An answer looked up while a
// forgetCallers() happened is not kept: it may have been read before the write.
/** What this module holds per App (core/app.ts). */
const newCaller = () => ({
  cache: new Lru<string, Resolved<Caller>>(4096),
  guard: undefined as (() => void) | undefined,
  forgotten: 0,
  /** Several nodes: each node is told when one forgets (cluster/node.ts: an entry of the Gateway's log). */
  shared: undefined as (() => void) | undefined,
})
declare module './app' {
  interface AppState {
    caller: ReturnType<typeof newCaller>
  }
}
const held = appState('caller', newCaller)

export function shareForgetCallers(tell: (() => void) | undefined): void {
  held().shared = tell
}

/** Drop every cached answer: call after any write that may end or change what a token resolves to. */
export function forgetCallers(): void {
  forgetCallersHere()
  held().shared?.()
}

/** Drop this process's cached answers (another node's forgetting, as the log tells it). */
export function forgetCallersHere(): void {
  const st = held()
  st.cache.clear()
  st.forgotten++
}

/** Asked before every lookup: drops answers another process's commit may have ended (by calling forgetCallers). */
export function setCallerCacheGuard(next: (() => void) | undefined): void {
  held().guard = next
  held().cache.clear()
}

function cached(key: string, now: number): Caller | undefined {
  const st = held()
  st.guard?.()
  const hit = st.cache.get(key)
  if (!hit) return undefined
  if (hit.until <= now) {
    st.cache.delete(key)
    return undefined
  }
  return hit.caller
}

function remember<C extends Caller>(key: string, resolved: Resolved<C> | undefined, since: number): C | undefined {
  if (!resolved) return undefined
  if (since === held().forgotten) held().cache.set(key, resolved)
  return resolved.caller
}

/** The two schemes, in any case, then whitespace and the token. */
const SCHEME = /^(bot|bearer)\s+(.+)$/i

/**
 * One spelling per credential: the value trimmed and `bot`/`BOT`/`Bot  ` written `Bot ` (likewise `Bearer `), so
 * `Bot X`, `bot X`, `BOT X` and `Bot  X` are one cache entry. The spellings clients send are returned as they are.
 */
export function canonicalAuthorization(value: string): string {
  // What clients send, `Bot <token>` or `Bearer <token>` with nothing around it, is its own spelling: no trim, no
  // regular expression (both ran twice per request, the rate limit's lookup and the caller's after the body).
  if (spelledCanonically(value)) return value
  const trimmed = value.trim()
  // Raw user tokens start with base64url of a digit (M, N or O): only a value starting with b or B can have a scheme.
  if ((trimmed.charCodeAt(0) | 0x20) !== 0x62) return trimmed
  const match = SCHEME.exec(trimmed)
  if (!match) return trimmed
  const canonical = `${match[1].length === 3 ? 'Bot' : 'Bearer'} ${match[2]}`
  return canonical === trimmed ? trimmed : canonical
}

/** A visible ASCII character (no space, no control): neither trimmed nor matched by `\s`. */
const visible = (code: number) => code > 0x20 && code < 0x7f

/** `Bot X…` or `Bearer X…` exactly, the token starting and ending with a visible ASCII character. */
function spelledCanonically(value: string): boolean {
  const at = value.startsWith('Bot ') ? 4 : value.startsWith('Bearer ') ? 7 : 0
  return at !== 0 && value.length > at && visible(value.charCodeAt(at)) && visible(value.charCodeAt(value.length - 1))
}

/**
 * Who a caller is for the limits that pace it (http/rate-limits.ts): the user for a session (every session of one
 * user shares it, as Discord's per-user limits do), the application for its bot, the application and the user for an
 * OAuth2 grant. Never the Authorization string: its spellings and a user's many sessions are one caller.
 */
export function callerKey(caller: Caller): string {
  if (caller.kind === 'user') return `u${caller.userId}`
  if (caller.kind === 'bot') return `b${caller.applicationId}`
  return `o${caller.applicationId}.${caller.userId}`
}

/**
 * Whether `next` may take over a Gateway session identified as `held` (a Resume, on this node or from another): the
 * same user through the same credential. A user's token of the same auth session (the one its logout ends); the same
 * application's bot; an OAuth2 token of the same application and grant (its token family: a refresh keeps it) that
 * lost none of the session's scopes. The user alone is not enough: another application's token of that user, or
 * another grant of it, would receive what the session's grant was given (security issue 40).
 */
export function sameCredential(held: Caller, next: Caller): boolean {
  if (held.userId !== next.userId) return false
  switch (held.kind) {
    case 'user':
      return next.kind === 'user' && next.sessionId === held.sessionId
    case 'bot':
      return next.kind === 'bot' && next.applicationId === held.applicationId
    case 'bearer':
      return (
        next.kind === 'bearer' &&
        next.applicationId === held.applicationId &&
        next.familyId === held.familyId &&
        held.scopes.every((scope) => next.scopes.includes(scope))
      )
  }
}

/** Tests: how many answers the token cache holds. */
export function cachedCallers(): number {
  return held().cache.size
}

/**
 * Resolve an Authorization value: `Bot <token>`, `Bearer <token>`, or a raw user token (the scheme in any case,
 * spaces around it ignored). From the token cache at once (no value, or one of a cached token); otherwise a promise
 * of the domains' answer.
 * `bare` lets the Gateway accept a token without prefix as Discord does at Identify: a user token first, then a bot
 * token (Discord's libraries send those bare), then an OAuth2 access token. Those answers are not kept: a Gateway
 * session resolves its token once (Identify, Resume), and keeping them cost ~200 B per connected user and pushed the
 * tokens REST calls with out of the bounded cache (bench/RESULTS.md issue 26).
 */
export function resolveAuthorization(
  value: string | null | undefined,
  { bare = false } = {},
): Caller | undefined | Promise<Caller | undefined> {
  if (!value) return undefined
  const canonical = canonicalAuthorization(value)
  if (canonical.length === 0 || canonical.length > 512) return undefined
  if (bare) return resolveUncached(canonical, true).then((resolved) => resolved?.caller)
  const hit = cached(canonical, clock.now())
  if (hit) return hit
  const since = held().forgotten
  return resolveUncached(canonical, false).then((resolved) => remember(canonical, resolved, since))
}

async function resolveUncached(trimmed: string, bare: boolean): Promise<Resolved<Caller> | undefined> {
  const [scheme, rest] = splitScheme(trimmed)
  if (scheme === 'bot') return rest ? resolvers.bot?.(rest) : undefined
  if (scheme === 'bearer') return rest ? resolvers.bearer?.(rest) : undefined
  if (!bare) return resolvers.user?.(trimmed)
  return (await resolvers.user?.(trimmed)) ?? (await resolvers.bot?.(trimmed)) ?? (await resolvers.bearer?.(trimmed))
}

function splitScheme(value: string): ['bot' | 'bearer' | 'raw', string] {
  const match = SCHEME.exec(value)
  if (!match) return ['raw', value]
  return [match[1].toLowerCase() as 'bot' | 'bearer', match[2].trim()]
}
