// What relationships tell the Gateway: READY's `relationships` and `game_relationships` (an OAuth2 session: of its
// application's game) for user sessions and OAuth2 sessions that see them,
// its `presences` (the friends and lobby-mates online); op 3 (presence); a session's start and end (online, offline).
import type { Caller } from '../core/caller'
import { audiences, sees } from '../gateway/bus'
import { presencesFor } from './presence'
import { listGameRelationships } from './game'
import { listRelationships } from './relationships'

export async function relationshipIdentify(caller: Caller) {
  if (caller.kind === 'bot') return {}
  const presences = await presencesFor(caller)
  if (!sees(caller, audiences.relationships)) return { ready: { presences } }
  const game = caller.kind === 'bearer' ? caller.applicationId : undefined
  return {
    ready: {
      relationships: await listRelationships(caller.userId),
      game_relationships: await listGameRelationships(caller.userId, game),
      presences,
    },
  }
}
