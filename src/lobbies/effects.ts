// Gateway effects gathered inside a transaction and delivered after it commits (never for a rolled-back change).
import { events, topics } from '../gateway/bus'
import { notifyMemberLeave, type LeaveReason } from './leave-hooks'
import type { LobbyRow } from './tables'

/** A payload computed after the commit (lobby snapshots read the linked channel, which is async). */
export class Lazy {
  constructor(readonly compute: () => unknown | Promise<unknown>) {}
}

export const lazy = (compute: () => unknown | Promise<unknown>) => new Lazy(compute)

type Effect =
  | { kind: 'publish'; topics: string[]; type: string; data: unknown }
  | { kind: 'subscribe' | 'unsubscribe'; userId: string; topic: string }
  | { kind: 'left'; lobbyId: string; userId: string; reason: LeaveReason }

export class Effects {
  private list: Effect[] = []

  publish(to: string[], type: string, data: unknown): void {
    this.list.push({ kind: 'publish', topics: to, type, data })
  }

  /** To the lobby's members and its application's Bot sessions. */
  toLobby(lobby: Pick<LobbyRow, 'id' | 'applicationId'>, type: string, data: unknown): void {
    this.publish(lobbyAudience(lobby), type, data)
  }

  toUser(userId: string, type: string, data: unknown): void {
    this.publish([topics.user(userId)], type, data)
  }

  subscribe(userId: string, lobbyId: string): void {
    this.list.push({ kind: 'subscribe', userId, topic: topics.lobby(lobbyId) })
  }

  unsubscribe(userId: string, lobbyId: string): void {
    this.list.push({ kind: 'unsubscribe', userId, topic: topics.lobby(lobbyId) })
  }

  /** A member is gone from the lobby (leave hooks: the voice domain drops them from the call). */
  left(lobbyId: string, userId: string, reason: LeaveReason): void {
    this.list.push({ kind: 'left', lobbyId, userId, reason })
  }

  /** Deliver in order; lazy payloads are computed once each, just before their publish. */
  async flush(): Promise<void> {
    const list = this.list
    this.list = []
    for (const e of list) {
      if (e.kind === 'publish')
        events.publish(e.topics, e.type, e.data instanceof Lazy ? await e.data.compute() : e.data)
      else if (e.kind === 'subscribe') events.subscribeUser(e.userId, e.topic)
      else if (e.kind === 'left') await notifyMemberLeave(e.lobbyId, e.userId, e.reason)
      else events.unsubscribeUser(e.userId, e.topic)
    }
  }
}

export function lobbyAudience(lobby: Pick<LobbyRow, 'id' | 'applicationId'>): string[] {
  return [topics.lobby(lobby.id), topics.app(lobby.applicationId)]
}
