// Game relationship and game invite endpoints (game.ts, invites.ts): the writes with an OAuth2 token of the game's
// application (relationships.write, which a provisional account's sdk.social_layer carries), as Discord documents;
// the reads also with a user session (every game's). Bots get Discord's 403 20001.
import { cachedUser } from '../accounts/store'
import type { Caller } from '../core/caller'
import { Errors } from '../core/errors'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { noContent } from '../http/respond'
import { gameRequestByUsername, gameRequestOrAccept, listGameRelationships, removeGameRelationship } from './game'
import { deleteInvite, listGameInvites, sendGameInvite } from './invites'
import {
  GameInviteCreated,
  GameInviteList,
  GameInviteSchema,
  GameRelationshipList,
  GameRequestByNameSchema,
  PutGameRelationshipSchema,
} from './schemas'

const tag = 'relationships'
type Kinds = ('user' | 'bearer')[]
const READ = { kinds: ['user', 'bearer'] as Kinds, scope: 'relationships.read' }
const WRITE = { kinds: ['bearer'] as 'bearer'[], scope: 'relationships.write' }

async function me(userId: string) {
  const u = await cachedUser(userId)
  if (!u) throw Errors.unauthorized()
  return u
}

/** The game an OAuth2 token speaks for (a user session: every game). */
const gameOf = (caller: Caller) => (caller.kind === 'bearer' ? caller.applicationId : undefined)
/** The game of a write (its rule lets OAuth2 tokens alone through). */
function game(caller: Caller): string {
  if (caller.kind !== 'bearer') throw Errors.unauthorized()
  return caller.applicationId
}

export const gameEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/game-relationships',
      auth: READ,
      tag,
      summary: "The current user's game friends and game friend requests",
      answers: { 200: GameRelationshipList },
    },
    async ({ caller }) => await listGameRelationships(caller.userId, gameOf(caller)),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/game-relationships',
      auth: WRITE,
      tag,
      summary: "Send a game friend request by username in the token's game (GAME_RELATIONSHIP_ADD to both users)",
      body: GameRequestByNameSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, body }) => {
      await gameRequestByUsername(await me(caller.userId), game(caller), body.username)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/users/@me/game-relationships/:userId',
      auth: WRITE,
      tag,
      summary: "Send or accept a game friend request in the token's game",
      body: PutGameRelationshipSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      await gameRequestOrAccept(await me(caller.userId), game(caller), params.userId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/users/@me/game-relationships/:userId',
      auth: WRITE,
      tag,
      summary: 'Remove a game friend, cancel or decline a game friend request (GAME_RELATIONSHIP_REMOVE)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      await removeGameRelationship(await me(caller.userId), game(caller), params.userId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/game-invite/@me',
      auth: READ,
      tag,
      summary: 'The live game invites and join requests the current user sent or received',
      answers: { 200: GameInviteList },
    },
    async ({ caller }) => await listGameInvites(caller.userId, gameOf(caller)),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/game-invite/@me',
      auth: WRITE,
      tag,
      summary: "Invite a friend to one's activity of the game, or ask to join theirs (GAME_INVITE_CREATE to both)",
      body: GameInviteSchema,
      answers: { 200: GameInviteCreated },
    },
    async ({ caller, body }) => await sendGameInvite(await me(caller.userId), game(caller), body),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/game-invite/@me/:inviteId',
      auth: WRITE,
      tag,
      summary: 'Take back a game invite, or decline one received (GAME_INVITE_DELETE to both)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      await deleteInvite(await me(caller.userId), params.inviteId, game(caller))
      return noContent()
    },
  ),
]
