// The contract between the domains and the Gateway. Domains publish events and change subscriptions here;
// the Gateway server (gateway/dispatch.ts) installs the implementation at start. Nothing here imports a domain.
import { appState } from '../core/app'
import type { Caller, UserCaller } from '../core/caller'

/** What a live gateway connection looks like to a domain (op handlers, identify hooks). */
export type GatewayConnection = {
  caller: Caller
  sessionId: string
  send(type: string, data: unknown): void
  /** (Session end hooks, several nodes) the session was resumed on another node and lives on there. */
  moved?: boolean
  /**
   * (Session end hooks, several nodes) a session of a node that died, never resumed, ended by the dead-node clean-up on
   * another node: its socket is gone and its node's presence counts were dropped already.
   */
  orphan?: boolean
  /** (Session start hooks, after an Identify) the Identify's `presence` field as the client sent it, if any. */
  presence?: unknown
}

export type IdentifyContribution = {
  /** Topics the connection joins (e.g. guild:<id>, lobby:<id>). user:<id>, app:<id>, session:<authSessionId> are automatic. */
  topics?: string[]
  /** Fields merged into READY's d (e.g. guilds). */
  ready?: Record<string, unknown>
  /** Dispatches sent right after READY, in order, before any other event (e.g. a bot's GUILD_CREATEs). */
  after?: [type: string, data: unknown][]
}

/**
 * What an event about one user is, which decides which of that user's Gateway sessions may see it (README, "What a
 * Gateway session sees"). A user session sees everything of its user; a bot session is its own user; an OAuth2
 * session sees only what its application and scopes grant.
 */
export type Audience =
  /** The account itself (settings, the private user): the user's own sessions only. */
  | { kind: 'account' }
  /** Guild objects (READY's guilds, GUILD_CREATE/DELETE): users, bots, and OAuth2 sessions with `guilds`. */
  | { kind: 'guilds' }
  /** What is said and done inside a guild (its channels, messages, roles, members): users and bots only. */
  | { kind: 'guild-activity' }
  /** One application's lobby: users, and that application's OAuth2 sessions with `lobbies.write`. */
  | { kind: 'lobby'; applicationId: string }
  /** Friends, blocks and requests (RELATIONSHIP_*): users, and OAuth2 sessions with `relationships.read`. */
  | { kind: 'relationships' }
  /** DM channels and their messages: users, and bots that asked for DIRECT_MESSAGES (1 << 12) or sent no intents. */
  | { kind: 'direct-messages' }
  /** One application's game friends and invites (GAME_RELATIONSHIP_*, GAME_INVITE_*): users, and that application's
   *  OAuth2 sessions with `relationships.read`. */
  | { kind: 'game'; applicationId: string }

export const audiences = {
  account: { kind: 'account' } as Audience,
  guilds: { kind: 'guilds' } as Audience,
  guildActivity: { kind: 'guild-activity' } as Audience,
  lobby: (applicationId: string): Audience => ({ kind: 'lobby', applicationId }),
  relationships: { kind: 'relationships' } as Audience,
  directMessages: { kind: 'direct-messages' } as Audience,
  game: (applicationId: string): Audience => ({ kind: 'game', applicationId }),
}

/** Discord's DIRECT_MESSAGES intent: a bot's session gets DM events only with it. */
export const DIRECT_MESSAGES_INTENT = 1 << 12

/** Whether a session identified as `caller` may see what is meant for `audience` (its user's). */
export function sees(caller: Caller, audience: Audience): boolean {
  if (caller.kind === 'user') return true
  if (caller.kind === 'bot') {
    if (audience.kind === 'direct-messages')
      return caller.intents === undefined || (caller.intents & DIRECT_MESSAGES_INTENT) !== 0
    return audience.kind === 'guilds' || audience.kind === 'guild-activity'
  }
  switch (audience.kind) {
    case 'guilds':
      return caller.scopes.includes('guilds')
    case 'lobby':
      // The web client's first-party token hears every lobby of its user, as the user's session does.
      return (
        (caller.firstParty === true || caller.applicationId === audience.applicationId) &&
        caller.scopes.includes('lobbies.write')
      )
    case 'relationships':
      return caller.scopes.includes('relationships.read')
    case 'game':
      return caller.applicationId === audience.applicationId && caller.scopes.includes('relationships.read')
    default:
      return false
  }
}

export interface EventBus {
  /**
   * Dispatch `type` with `data` to every connection subscribed to any of `topics`. Given inside a write transaction, it
   * goes out once that commits (never if it rolls back); with several nodes it is then written in the transaction
   * (cluster/outbox.ts), so it survives a node that dies right after COMMIT.
   */
  publish(topics: string | string[], type: string, data: unknown): void
  /** Dispatch to those sessions of a user (live or resumable) that see `audience`. */
  publishToUser(userId: string, audience: Audience, type: string, data: unknown): void
  /** Subscribe those connections (live or resumable) of a user that see `audience` to a topic (a guild, a lobby). */
  subscribeUser(userId: string, topic: string, audience: Audience): void
  unsubscribeUser(userId: string, topic: string): void
  /**
   * subscribeUser for many users and topics in one call: every user's sessions that see `audience` follow every topic.
   * One call (one outbox row, one log entry) for a page of a guild's members, where a call per member and topic made
   * a guild of thousands a transaction of tens of thousands of rows and locks (cluster/outbox.ts).
   */
  subscribeUsers(userIds: string[], topics: string[], audience: Audience): void
  /** unsubscribeUser for many users and topics in one call: no session of these users follows these topics. */
  unsubscribeUsers(userIds: string[], topics: string[]): void
  /** Close every connection identified with this auth session (logout, session revoked). */
  closeAuthSession(authSessionId: string, code: number, reason?: string): void
  /** Close every connection of a user, whatever it identified with (account revert, lock). */
  closeUser(userId: string, code: number, reason?: string): void
  /**
   * Close a user's OAuth2 connections: those identified with a token of one family (a revoked token, a reused refresh
   * token), or with any token of one application (its authorization removed; `'*'`: of every application).
   */
  closeGrants(
    userId: string,
    which: { familyId: string } | { applicationId: string },
    code: number,
    reason?: string,
  ): void
  /** Move the connections of an auth session to its replacement (new token) and tell them: AUTH_SESSION_CHANGE. */
  changeAuthSession(oldAuthSessionId: string, next: UserCaller): void
}

/**
 * The bus's calls that change sessions rather than dispatch, as data: with several nodes each one is an entry of the
 * cluster's log that every node applies to its own sessions, in log order (gateway/dispatch.ts applyLogged).
 */
export type SessionCall =
  | { kind: 'subscribe-user'; userId: string; topic: string; audience: Audience }
  | { kind: 'unsubscribe-user'; userId: string; topic: string }
  | { kind: 'subscribe-users'; userIds: string[]; topics: string[]; audience: Audience }
  | { kind: 'unsubscribe-users'; userIds: string[]; topics: string[] }
  | { kind: 'close-auth-session'; authSessionId: string; code: number; reason?: string }
  | { kind: 'close-user'; userId: string; code: number; reason?: string }
  | {
      kind: 'close-grants'
      userId: string
      which: { familyId: string } | { applicationId: string }
      code: number
      reason?: string
    }
  | { kind: 'change-auth-session'; oldAuthSessionId: string; next: UserCaller }
  /** A node resumed this session (its socket reconnected there): every other node lets go of its copy. */
  | { kind: 'take-session'; sessionId: string; node: string }

/** What the cluster's log hands back to every node, in sequence order: dispatches (their frames made) and calls. */
export type LoggedEntry =
  | { kind: 'dispatch'; topics: string[]; frame: string }
  | { kind: 'user-dispatch'; userId: string; audience: Audience; frame: string }
  | SessionCall

/**
 * Where the bus sends what it is given when several nodes share a Gateway (cluster/gateway.ts): the cluster's log,
 * which sequences it and hands it back to every node (LoggedEntry). Data is JSON text already.
 */
export type GatewayLogPort = {
  dispatch(topics: string[], type: string, json: string): void
  userDispatch(userId: string, audience: Audience, type: string, json: string): void
  call(call: SessionCall): void
  /** Where sessions are kept for a Resume on any node. */
  sessions: SessionRegistry
  /**
   * True once this node has applied every entry committed before the call (the outbox relayed, the log read up to
   * its end); false when it cannot tell soon (Redis away). A credential found ended waits for it: its replacement's
   * AUTH_SESSION_CHANGE, committed with the end, is applied first.
   */
  caughtUp(): Promise<boolean>
}

/** What a node keeps of a Gateway session for another node to resume it. */
export type SessionRecord = { id: string; caller: Caller; topics: string[]; readySeq: number }

/**
 * The sessions of every node, for a Resume on any of them (cluster/sessions.ts): saved at Identify and at each change
 * of topics or credentials, kept while the session lives and for the resume window after its socket went.
 */
export type SessionRegistry = {
  /** This node's name in `take-session` entries. */
  readonly node: string
  save(record: SessionRecord): void
  /** The session ended for good: it can no longer be resumed anywhere. */
  drop(sessionId: string): void
  /** These sessions still have a socket here: their records live on. */
  refresh(sessionIds: string[]): void
  /** Take a session another node held (one taker at a time); undefined when there is none to take. */
  claim(sessionId: string): Promise<SessionRecord | undefined>
  /** The take that `claim` began is over (taken or given up): another node may claim the session again. */
  claimed(sessionId: string): Promise<void>
  /** The log's entries after `afterSeq` up to `uptoSeq`; undefined when the log no longer reaches back that far. */
  range(afterSeq: number, uptoSeq: number): Promise<{ seq: number; entry: LoggedEntry }[] | undefined>
}

const noop: EventBus = {
  publish() {},
  publishToUser() {},
  subscribeUser() {},
  unsubscribeUser() {},
  subscribeUsers() {},
  unsubscribeUsers() {},
  closeAuthSession() {},
  closeUser() {},
  closeGrants() {},
  changeAuthSession() {},
}

/** What the service's domains plugged into its Gateway (app.ts mounts them per App, core/app.ts). */
const newBus = () => ({
  bus: noop as EventBus,
  identifyHooks: [] as IdentifyHook[],
  opHandlers: new Map<number, OpHandler>(),
  sessionStartHooks: [] as CloseHook[],
  sessionEndHooks: [] as CloseHook[],
  /**
   * The accounts domain says which auth sessions still live, the oauth2 domain which token families; the Gateway
   * closes (4004) connections whose credential ended where no event told it (another process, expiry).
   */
  credentialChecks: {} as { user?: CredentialCheck; bearer?: CredentialCheck; bot?: CredentialCheck },
})
declare module '../core/app' {
  interface AppState {
    bus: ReturnType<typeof newBus>
  }
}
export const wiring = appState('bus', newBus)

export function installBus(next: EventBus): void {
  wiring().bus = next
}

export const events: EventBus = {
  publish: (topics, type, data) => wiring().bus.publish(topics, type, data),
  publishToUser: (userId, audience, type, data) => wiring().bus.publishToUser(userId, audience, type, data),
  subscribeUser: (userId, topic, audience) => wiring().bus.subscribeUser(userId, topic, audience),
  unsubscribeUser: (userId, topic) => wiring().bus.unsubscribeUser(userId, topic),
  subscribeUsers: (userIds, topicList, audience) => wiring().bus.subscribeUsers(userIds, topicList, audience),
  unsubscribeUsers: (userIds, topicList) => wiring().bus.unsubscribeUsers(userIds, topicList),
  closeAuthSession: (id, code, reason) => wiring().bus.closeAuthSession(id, code, reason),
  closeUser: (id, code, reason) => wiring().bus.closeUser(id, code, reason),
  closeGrants: (userId, which, code, reason) => wiring().bus.closeGrants(userId, which, code, reason),
  changeAuthSession: (oldId, next) => wiring().bus.changeAuthSession(oldId, next),
}

// There is no topic per user: what is meant for a user goes through publishToUser, which asks each session (sees).
export const topics = {
  /** Followed by the user's own sessions only (not OAuth2 ones): private account events such as USER_UPDATE. */
  account: (id: string) => `account:${id}`,
  /** An application's Bot sessions. */
  app: (id: string) => `app:${id}`,
  session: (authSessionId: string) => `session:${authSessionId}`,
  guild: (id: string) => `guild:${id}`,
  channel: (id: string) => `channel:${id}`,
  lobby: (id: string) => `lobby:${id}`,
}

/**
 * Topics only one user's sessions follow (its account, one auth session): the Gateway delivers them to those sessions
 * itself rather than through a native topic per user (gateway/sessions.ts deliveredByTopic).
 */
export function isPrivateTopic(topic: string): boolean {
  return topic.startsWith('account:') || topic.startsWith('session:')
}

export type IdentifyHook = (caller: Caller) => IdentifyContribution | Promise<IdentifyContribution>
export type OpHandler = (connection: GatewayConnection, data: unknown) => void | Promise<void>
export type CloseHook = (connection: GatewayConnection) => void | Promise<void>

/** A domain adds topics and READY fields for each new gateway session. */
export function onIdentify(hook: IdentifyHook): void {
  const w = wiring()
  if (!w.identifyHooks.includes(hook)) w.identifyHooks.push(hook)
}

/** A domain handles a client opcode (e.g. 17 lobby voice states). */
export function onOpcode(op: number, handler: OpHandler): void {
  wiring().opHandlers.set(op, handler)
}

/**
 * A domain reacts when a gateway session is identified (after READY is queued; not on Resume). Every started session
 * later ends (onSessionEnd), so the two can keep a count.
 */
export function onSessionStart(hook: CloseHook): void {
  const w = wiring()
  if (!w.sessionStartHooks.includes(hook)) w.sessionStartHooks.push(hook)
}

/** A domain reacts when a gateway session ends for good (not on a resumable disconnect). */
export function onSessionEnd(hook: CloseHook): void {
  const w = wiring()
  if (!w.sessionEndHooks.includes(hook)) w.sessionEndHooks.push(hook)
}

/**
 * Which of these credentials still authenticate: auth session ids (user sessions), token families (OAuth2) or
 * application ids (bots).
 */
export type CredentialCheck = (ids: string[]) => Set<string> | Promise<Set<string>>

export function setCredentialCheck(kind: 'user' | 'bearer' | 'bot', check: CredentialCheck): void {
  wiring().credentialChecks[kind] = check
}
