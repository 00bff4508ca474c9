// What relationships tell the Gateway: READY's `relationships` for user sessions and OAuth2 sessions that see them.
import type { Caller } from '../core/caller'
import { audiences, sees } from '../gateway/bus'
import { listRelationships } from './relationships'

export async function relationshipIdentify(caller: Caller) {
  if (caller.kind === 'bot' || !sees(caller, audiences.relationships)) return {}
  return { ready: { relationships: await listRelationships(caller.userId) } }
}
