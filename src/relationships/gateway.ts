// What relationships tell the Gateway: READY's `relationships` for user sessions and OAuth2 sessions that see them,
// its `presences` (the friends and lobby-mates online); op 3 (presence); a session's start and end (online, offline).
import type { Caller } from '../core/caller'
import { audiences, sees } from '../gateway/bus'
import { presencesFor } from './presence'
import { listRelationships } from './relationships'

export async function relationshipIdentify(caller: Caller) {
  if (caller.kind === 'bot') return {}
  const presences = await presencesFor(caller)
  if (!sees(caller, audiences.relationships)) return { ready: { presences } }
  return { ready: { relationships: await listRelationships(caller.userId), presences } }
}
