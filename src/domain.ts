// The module contract: what a domain hands the app. Each domain folder exports one object `satisfies DomainModule`
// (its module.ts); modules.ts lists them, app.ts mounts the list (routes, token resolvers, Gateway hooks, ports) and
// server.ts starts and stops it (timers, sockets) and runs its sweepers. A domain never registers itself.
import type { AnyElysia } from 'elysia'
import type { BearerCaller, BotCaller, TokenResolver, UserCaller } from './core/caller'
import type { CredentialCheck, CloseHook, IdentifyHook, OpHandler } from './gateway/bus'
import type { Endpoint } from './http/endpoint'

export type DomainModule = {
  /** The domain's folder. */
  name: string
  /**
   * REST endpoints, each one declaration (http/endpoint.ts), mounted under /api/v9, /api/v10 and /api: their routes,
   * docs, limits and, for the hot ones, the lane's handlers.
   */
  endpoints?: Endpoint[]
  /** Routes outside the API prefixes (sockets, pages), mounted once at the root after the API. */
  root?: AnyElysia[]
  /** How the tokens this domain issues resolve to callers. */
  tokens?: { user?: TokenResolver<UserCaller>; bot?: TokenResolver<BotCaller>; bearer?: TokenResolver<BearerCaller> }
  /** Which of these auth sessions still exist: the Gateway closes connections whose session ended elsewhere. */
  liveSessions?: CredentialCheck
  /** Which of these OAuth2 token families still authenticate: the Gateway closes the connections of the others. */
  liveGrants?: CredentialCheck
  /** Which of these applications' bots still authenticate (not locked, not deleted): the Gateway closes the others. */
  liveBots?: CredentialCheck
  /** What a new Gateway session gets from this domain: READY fields and the topics it follows. */
  identify?: IdentifyHook
  /** The client opcodes this domain handles. */
  opcodes?: Record<number, OpHandler>
  /** A Gateway session was identified (after READY is queued; not on Resume); every started session later ends. */
  sessionStart?: CloseHook
  /** A Gateway session ended for good (not a resumable disconnect). */
  sessionEnd?: CloseHook
  /** Plug into the domains below (their ports and hooks); run when the app is built. */
  install?(): void
  /** Delete what only expires (tokens, tickets, idle sessions); run every 10 minutes. */
  sweep?(): void | Promise<void>
  /** Timers and sockets: started once the server listens, stopped (in reverse order) before it closes. */
  start?(): void | Promise<void>
  stop?(): void | Promise<void>
}
