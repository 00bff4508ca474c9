// Relationship endpoints (Discord's user API: discord-userdoccers relationships.mdx): user sessions, and OAuth2 tokens
// with relationships.read (GET) or relationships.write (the rest), which a provisional account's sdk.social_layer
// carries. Bots get Discord's 403 20001 from the auth rule.
import { cachedUser } from '../accounts/store'
import { Errors } from '../core/errors'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { noContent } from '../http/respond'
import {
  block,
  listRelationships,
  renameFriend,
  removeRelationship,
  requestByUsername,
  requestOrAccept,
} from './relationships'
import { PatchRelationshipSchema, PutRelationshipSchema, RelationshipList, RequestByNameSchema } from './schemas'

const tag = 'relationships'
type Kinds = ('user' | 'bearer')[]
const READ = { kinds: ['user', 'bearer'] as Kinds, scope: 'relationships.read' }
const WRITE = { kinds: ['user', 'bearer'] as Kinds, scope: 'relationships.write' }

async function me(userId: string) {
  const u = await cachedUser(userId)
  if (!u) throw Errors.unauthorized()
  return u
}

export const relationshipEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/relationships',
      auth: READ,
      tag,
      summary: "The current user's friends, blocks and pending friend requests",
      answers: { 200: RelationshipList },
    },
    async ({ caller }) => await listRelationships(caller.userId),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/relationships',
      auth: WRITE,
      tag,
      summary: 'Send a friend request by username (RELATIONSHIP_ADD to both users)',
      body: RequestByNameSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, body }) => {
      await requestByUsername(await me(caller.userId), body.username, body.discriminator)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/users/@me/relationships/:userId',
      auth: WRITE,
      tag,
      summary: 'Send or accept a friend request (no type), or block (type 2)',
      body: PutRelationshipSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params, body }) => {
      const user = await me(caller.userId)
      if (body?.type === 2) await block(user, params.userId)
      else await requestOrAccept(user, params.userId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/users/@me/relationships/:userId',
      auth: WRITE,
      tag,
      summary: "Set a friend's nickname (RELATIONSHIP_UPDATE)",
      body: PatchRelationshipSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params, body }) => {
      await renameFriend(await me(caller.userId), params.userId, body.nickname)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/users/@me/relationships/:userId',
      auth: WRITE,
      tag,
      summary: 'Remove a friend, cancel or decline a request, or unblock (RELATIONSHIP_REMOVE)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      await removeRelationship(await me(caller.userId), params.userId)
      return noContent()
    },
  ),
]
