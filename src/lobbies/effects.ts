// Gateway effects gathered inside a transaction and delivered after it commits (never for a rolled-back change).
import { events, topics } from '../gateway/bus'
import type { LobbyRow } from './tables'

type Effect =
  | { kind: 'publish'; topics: string[]; type: string; data: unknown }
  | { kind: 'subscribe' | 'unsubscribe'; userId: string; topic: string }

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

  flush(): void {
    const list = this.list
    this.list = []
    for (const e of list) {
      if (e.kind === 'publish') events.publish(e.topics, e.type, e.data)
      else if (e.kind === 'subscribe') events.subscribeUser(e.userId, e.topic)
      else events.unsubscribeUser(e.userId, e.topic)
    }
  }
}

export function lobbyAudience(lobby: Pick<LobbyRow, 'id' | 'applicationId'>): string[] {
  return [topics.lobby(lobby.id), topics.app(lobby.applicationId)]
}
