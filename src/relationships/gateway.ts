// What relationships tell the Gateway: READY's `relationships` and `presences` (the friends online) for user sessions
// and OAuth2 sessions that see them; op 3 (presence); a session's start and end (online, offline).
import type { Caller } from '../core/caller'
import { audiences, sees } from '../gateway/bus'
import { friendPresences } from './presence'
import { listRelationships } from './relationships'

export async function relationshipIdentify(caller: Caller) {
  if (caller.kind === 'bot' || !sees(caller, audiences.relationships)) return {}
  return {
    ready: { relationships: await listRelationships(caller.userId), presences: await friendPresences(caller.userId) },
  }
}
