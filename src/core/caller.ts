// Who is calling: a user session, an application's bot, or an OAuth2 grant. IDs only; domains load what they need.
// The domains that own the tokens register how a token resolves (app.ts wires them), so http/ and gateway/
// resolve tokens without importing any domain.
import { clock } from './clock'
import { Lru } from './lru'

export type UserCaller = { kind: 'user'; userId: string; sessionId: string; sessionIdHash: string }
export type BotCaller = { kind: 'bot'; userId: string; applicationId: string }
export type BearerCaller = { kind: 'bearer'; userId: string; applicationId: string; scopes: string[]; grantId: string }
export type Caller = UserCaller | BotCaller | BearerCaller
export type CallerKind = Caller['kind']

/** A token's caller and the clock time (ms) up to which that answer may be reused without asking the domain again. */
export type Resolved<C extends Caller> = { caller: C; until: number }
/** Synchronous: every request asks, and bun:sqlite answers synchronously. */
export type TokenResolver<C extends Caller> = (token: string) => Resolved<C> | undefined

const resolvers: {
  user?: TokenResolver<UserCaller>
  bot?: TokenResolver<BotCaller>
  bearer?: TokenResolver<BearerCaller>
} = {}

export function setTokenResolvers(next: typeof resolvers): void {
  Object.assign(resolvers, next)
}

// Token -> caller answers, so that a request does not hash its token and read the database to learn who it is. A
// Map kept in use order (LRU), bounded. Only successful answers are kept (a flood of wrong tokens cannot fill it).
// Every store write that could end a token's life (sessions deleted, the user row changed, a refresh token spent, a
// token family revoked) calls forgetCallers() in the same process; writes by another process (the CLI) are seen
// through the database's change counter (setCallerCacheGuard), looked at once per millisecond.
const cache = new Lru<string, Resolved<Caller>>(4096)
let guard: (() => number) | undefined
let guardSeen: number | undefined
let guardCheckedAt = 0

/** Drop every cached answer: call after any write that may end or change what a token resolves to. */
export function forgetCallers(): void {
  cache.clear()
}

/** A counter that changes when another process commits to the database (SQLite's data_version). */
export function setCallerCacheGuard(next: (() => number) | undefined): void {
  guard = next
  guardSeen = undefined
  guardCheckedAt = 0
  cache.clear()
}

function cached(key: string, now: number): Caller | undefined {
  // Asked at most once per millisecond of real time (a statement each time costs ~10 % of a cached request): another
  // process's commit is seen by every request that starts a millisecond or more after it.
  const real = Date.now()
  if (guard && real !== guardCheckedAt) {
    guardCheckedAt = real
    const version = guard()
    if (version !== guardSeen) {
      guardSeen = version
      cache.clear()
      return undefined
    }
  }
  const hit = cache.get(key)
  if (!hit) return undefined
  if (hit.until <= now) {
    cache.delete(key)
    return undefined
  }
  return hit.caller
}

function remember<C extends Caller>(key: string, resolved: Resolved<C> | undefined): C | undefined {
  if (!resolved) return undefined
  cache.set(key, resolved)
  return resolved.caller
}

/**
 * Resolve an Authorization value: `Bot <token>`, `Bearer <token>`, or a raw user token.
 * `bare` lets the Gateway accept a token without prefix as Discord does at Identify: a user token first, then a bot
 * token (Discord's libraries send those bare), then an OAuth2 access token.
 */
export function resolveAuthorization(value: string | null | undefined, { bare = false } = {}): Caller | undefined {
  if (!value) return undefined
  const key = bare ? `\0${value}` : value
  return cached(key, clock.now()) ?? remember(key, resolveUncached(value, bare))
}

function resolveUncached(value: string, bare: boolean): Resolved<Caller> | undefined {
  const trimmed = value.trim()
  if (trimmed.length === 0 || trimmed.length > 512) return undefined
  const [scheme, rest] = splitScheme(trimmed)
  if (scheme === 'bot') return rest ? resolvers.bot?.(rest) : undefined
  if (scheme === 'bearer') return rest ? resolvers.bearer?.(rest) : undefined
  if (!bare) return resolvers.user?.(trimmed)
  return resolvers.user?.(trimmed) ?? resolvers.bot?.(trimmed) ?? resolvers.bearer?.(trimmed)
}

function splitScheme(value: string): ['bot' | 'bearer' | 'raw', string] {
  const match = /^(bot|bearer)\s+(.+)$/i.exec(value)
  if (!match) return ['raw', value]
  return [match[1].toLowerCase() as 'bot' | 'bearer', match[2].trim()]
}
