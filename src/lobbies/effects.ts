// Gateway effects gathered inside a transaction and given to the bus at its end, still inside it: the bus sends them
// once it commits (never for a rolled-back change), and with several nodes writes them in it (cluster/outbox.ts), so a
// node that dies right after the COMMIT loses none.
import { type CommitHolder, holdForCommit } from '../db/client'
import { audiences, events, topics } from '../gateway/bus'
import { Serialized } from '../gateway/protocol'
import { presenceOnJoin } from '../relationships/presence'
import { notifyMemberLeave, type LeaveReason } from './leave-hooks'
import type { LobbyRow } from './tables'

/** A payload computed after the commit (lobby snapshots read the linked channel, which is async). */
export class Lazy {
  private made?: Promise<Serialized>
  constructor(private readonly compute: () => unknown | Promise<unknown>) {}

  /** The payload, computed and serialized on the first call; every later publish of it sends the same text. */
  value(): Promise<Serialized> {
    this.made ??= Promise.resolve(this.compute()).then((data) => new Serialized(JSON.stringify(data)))
    return this.made
  }
}

export const lazy = (compute: () => unknown | Promise<unknown>) => new Lazy(compute)

type Effect =
  | { kind: 'publish'; topics: string[]; type: string; data: unknown }
  | { kind: 'user'; userId: string; applicationId: string; type: string; data: unknown }
  | { kind: 'subscribe'; userId: string; topic: string; applicationId: string }
  | { kind: 'unsubscribe'; userId: string; topic: string }
  | { kind: 'left'; lobbyId: string; userId: string; reason: LeaveReason }
  | { kind: 'joined'; lobbyId: string; applicationId: string; userId: string }

export class Effects {
  private list: Effect[] = []

  publish(to: string[], type: string, data: unknown): void {
    this.list.push({ kind: 'publish', topics: to, type, data })
  }

  /** To the lobby's members and its application's Bot sessions. */
  toLobby(lobby: Pick<LobbyRow, 'id' | 'applicationId'>, type: string, data: unknown): void {
    this.publish(lobbyAudience(lobby), type, data)
  }

  /** To those of a user's sessions that see the lobby's application (its OAuth2 sessions, and user sessions). */
  toUser(userId: string, lobby: Pick<LobbyRow, 'applicationId'>, type: string, data: unknown): void {
    this.list.push({ kind: 'user', userId, applicationId: lobby.applicationId, type, data })
  }

  subscribe(userId: string, lobby: Pick<LobbyRow, 'id' | 'applicationId'>): void {
    this.list.push({ kind: 'subscribe', userId, topic: topics.lobby(lobby.id), applicationId: lobby.applicationId })
  }

  unsubscribe(userId: string, lobbyId: string): void {
    this.list.push({ kind: 'unsubscribe', userId, topic: topics.lobby(lobbyId) })
  }

  /** A member is gone from the lobby (leave hooks: the voice domain drops them from the call). */
  left(lobbyId: string, userId: string, reason: LeaveReason): void {
    this.list.push({ kind: 'left', lobbyId, userId, reason })
  }

  /** A member joined: once committed, it and the lobby's members online see each other's presence. */
  joined(lobby: Pick<LobbyRow, 'id' | 'applicationId'>, userId: string): void {
    this.list.push({ kind: 'joined', lobbyId: lobby.id, applicationId: lobby.applicationId, userId })
  }

  /**
   * Give the effects to the bus, in order; called as the last step of the transaction that gathered them (outside one
   * they go at once). A lazy payload is computed and serialized once, just before its first publish, so it shows what
   * the transaction wrote. The leave hooks run once the transaction commits (they start writes of their own).
   */
  async flush(): Promise<void> {
    const list = this.list
    this.list = []
    for (const e of list) {
      if (e.kind === 'publish') events.publish(e.topics, e.type, e.data instanceof Lazy ? await e.data.value() : e.data)
      else if (e.kind === 'user')
        events.publishToUser(
          e.userId,
          audiences.lobby(e.applicationId),
          e.type,
          e.data instanceof Lazy ? await e.data.value() : e.data,
        )
      else if (e.kind === 'subscribe') events.subscribeUser(e.userId, e.topic, audiences.lobby(e.applicationId))
      else if (e.kind === 'left') {
        if (!holdForCommit(afterLeave, e)) await notifyMemberLeave(e.lobbyId, e.userId, e.reason)
      } else if (e.kind === 'joined') {
        if (!holdForCommit(afterJoin, e)) await presenceOnJoin(e.lobbyId, e.applicationId, e.userId)
      } else events.unsubscribeUser(e.userId, e.topic)
    }
  }
}

/** The leave hooks of a committed transaction, one member after another. */
const afterLeave: CommitHolder<Extract<Effect, { kind: 'left' }>> = {
  async after(items) {
    for (const e of items) await notifyMemberLeave(e.lobbyId, e.userId, e.reason)
  },
}

/** The presences of a committed transaction's joiners (relationships/presence.ts reads the committed members). */
const afterJoin: CommitHolder<Extract<Effect, { kind: 'joined' }>> = {
  async after(items) {
    for (const e of items) await presenceOnJoin(e.lobbyId, e.applicationId, e.userId)
  },
}

export function lobbyAudience(lobby: Pick<LobbyRow, 'id' | 'applicationId'>): string[] {
  return [topics.lobby(lobby.id), topics.app(lobby.applicationId)]
}
