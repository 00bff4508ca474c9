// The contract between the domains and the Gateway. Domains publish events and change subscriptions here;
// the Gateway server (gateway/server.ts) installs the implementation at start. Nothing here imports a domain.
import type { Caller, UserCaller } from '../core/caller'

/** What a live gateway connection looks like to a domain (op handlers, identify hooks). */
export type GatewayConnection = {
  caller: Caller
  sessionId: string
  send(type: string, data: unknown): void
}

export type IdentifyContribution = {
  /** Topics the connection joins (e.g. guild:<id>, lobby:<id>). user:<id>, app:<id>, session:<authSessionId> are automatic. */
  topics?: string[]
  /** Fields merged into READY's d (e.g. guilds). */
  ready?: Record<string, unknown>
}

export interface EventBus {
  /** Dispatch `type` with `data` to every connection subscribed to any of `topics`. Call after the transaction commits. */
  publish(topics: string | string[], type: string, data: unknown): void
  /** Subscribe every connection (live or resumable) of a user to a topic, e.g. on joining a guild or lobby. */
  subscribeUser(userId: string, topic: string): void
  unsubscribeUser(userId: string, topic: string): void
  /** Close every connection identified with this auth session (logout, session revoked). */
  closeAuthSession(authSessionId: string, code: number, reason?: string): void
  /** Close every connection of a user (account revert, lock). */
  closeUser(userId: string, code: number, reason?: string): void
  /** Move the connections of an auth session to its replacement (new token) and tell them: AUTH_SESSION_CHANGE. */
  changeAuthSession(oldAuthSessionId: string, next: UserCaller): void
}

const noop: EventBus = {
  publish() {},
  subscribeUser() {},
  unsubscribeUser() {},
  closeAuthSession() {},
  closeUser() {},
  changeAuthSession() {},
}

let bus: EventBus = noop

export function installBus(next: EventBus): void {
  bus = next
}

export const events: EventBus = {
  publish: (topics, type, data) => bus.publish(topics, type, data),
  subscribeUser: (userId, topic) => bus.subscribeUser(userId, topic),
  unsubscribeUser: (userId, topic) => bus.unsubscribeUser(userId, topic),
  closeAuthSession: (id, code, reason) => bus.closeAuthSession(id, code, reason),
  closeUser: (id, code, reason) => bus.closeUser(id, code, reason),
  changeAuthSession: (oldId, next) => bus.changeAuthSession(oldId, next),
}

export const topics = {
  user: (id: string) => `user:${id}`,
  /** Followed by the user's own sessions only (not OAuth2 ones): private account events such as USER_UPDATE. */
  account: (id: string) => `account:${id}`,
  app: (id: string) => `app:${id}`,
  session: (authSessionId: string) => `session:${authSessionId}`,
  guild: (id: string) => `guild:${id}`,
  channel: (id: string) => `channel:${id}`,
  lobby: (id: string) => `lobby:${id}`,
}

export type IdentifyHook = (caller: Caller) => IdentifyContribution | Promise<IdentifyContribution>
export type OpHandler = (connection: GatewayConnection, data: unknown) => void | Promise<void>
export type CloseHook = (connection: GatewayConnection) => void | Promise<void>

export const identifyHooks: IdentifyHook[] = []
export const opHandlers = new Map<number, OpHandler>()
export const sessionStartHooks: CloseHook[] = []
export const sessionEndHooks: CloseHook[] = []

/** A domain adds topics and READY fields for each new gateway session. */
export function onIdentify(hook: IdentifyHook): void {
  if (!identifyHooks.includes(hook)) identifyHooks.push(hook)
}

/** A domain handles a client opcode (e.g. 17 lobby voice states). */
export function onOpcode(op: number, handler: OpHandler): void {
  opHandlers.set(op, handler)
}

/**
 * A domain reacts when a gateway session is identified (after READY is queued; not on Resume). Every started session
 * later ends (onSessionEnd), so the two can keep a count.
 */
export function onSessionStart(hook: CloseHook): void {
  if (!sessionStartHooks.includes(hook)) sessionStartHooks.push(hook)
}

/** A domain reacts when a gateway session ends for good (not on a resumable disconnect). */
export function onSessionEnd(hook: CloseHook): void {
  if (!sessionEndHooks.includes(hook)) sessionEndHooks.push(hook)
}

export type AuthSessionCheck = (authSessionIds: string[]) => Set<string> | Promise<Set<string>>
let authSessionCheck: AuthSessionCheck | undefined

/**
 * The accounts domain says which auth sessions still exist; the Gateway closes (4004) connections whose session
 * ended elsewhere (an operator's CLI in another process, idle expiry).
 */
export function setAuthSessionCheck(check: AuthSessionCheck): void {
  authSessionCheck = check
}

export function getAuthSessionCheck(): AuthSessionCheck | undefined {
  return authSessionCheck
}
