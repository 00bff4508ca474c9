// Lobby endpoints (spec §4.1, WIRE.md §1). Application-only rows take a Bot token; OAuth2 rows take a Bearer token
// with lobbies.write or the creating application's Bot token. User tokens get 403 20002 from the auth rule (spec §4.1:
// the web client reads and chats with its first-party OAuth2 token, oauth2/first-party.ts, as a member: `asMember`).
import { Errors } from '../core/errors'
import { reading } from '../db/client'
import { isSnowflake } from '../core/snowflake'
import { camelKeys } from '../http/camel'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { paging } from '../http/form'
import { json, JsonText, noContent } from '../http/respond'
import { appCaller, isFirstParty, lobbyOf, lobbyWithMembers } from './access'
import { verifyOverrideUrl } from './event-webhooks'
import { createLobby, createOrJoinLobby, deleteLobby, patchLobby } from './lifecycle'
import { MESSAGES_DEFAULT_LIMIT, MESSAGES_MAX_LIMIT, USER_LOBBIES_LISTED } from './limits'
import { userLobbies, webClientView } from './user-lobbies'
import type { BearerCaller } from '../core/caller'
import { bulkMembers, putMember, removeMember } from './members'
import { inviteToLinkedChannel, setLinkedChannel } from './channel-linking'
import { moderateMessage, postMessage, readMessages } from './messages'
import {
  BulkSchema,
  CreateLobbySchema,
  LinkSchema,
  LobbyAnswer,
  LobbyInviteAnswer,
  LobbyMemberAnswer,
  LobbyMembersAnswer,
  LobbyMessageAnswer,
  LobbyMessagesAnswer,
  LobbyReadAnswer,
  LobbyReadList,
  MessageSchema,
  MessagesQuery,
  ModerationMetadataSchema,
  PatchLobbySchema,
  PutLobbySchema,
  PutMemberSchema,
} from './schemas'
import { restText } from './snapshots'
import { cachedLobby } from './store'

const APP = 'bot' as const
const OAUTH2 = { kinds: ['bot', 'bearer'] as ('bot' | 'bearer')[], scope: 'lobbies.write' }

const BEARER = { kinds: ['bearer'] as 'bearer'[], scope: 'lobbies.write' }

const tag = 'lobbies'

/** The lobby endpoints; the hot ones are answered by Bun's router directly (http/lane.ts). */
export const lobbyEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/lobbies',
      auth: APP,
      tag,
      summary: 'Create a lobby',
      body: CreateLobbySchema,
      answers: { 201: LobbyAnswer },
    },
    async ({ caller, body }) => {
      const app = appCaller(caller)
      const input = camelKeys(body)
      // The override is PINGed before anything is written (a refusal leaves no lobby behind).
      if (input.overrideEventWebhooksUrl) await verifyOverrideUrl(app.applicationId, input.overrideEventWebhooksUrl)
      return json(await createLobby(app, input), 201)
    },
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/lobbies',
      auth: OAUTH2,
      tag,
      summary: 'Join the lobby with this secret, or create it',
      body: PutLobbySchema,
      answers: { 200: LobbyAnswer },
    },
    ({ caller, body }) => createOrJoinLobby(appCaller(caller), camelKeys(body)),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/lobbies/:lobbyId',
      auth: OAUTH2,
      tag,
      summary:
        "A lobby. Bot: its application's lobbies; OAuth2: its application's lobbies the user is in; the web client's first-party token: any lobby the user is in, as the Gateway shows it (members with `connected` and their public `user`, `voice_states`). Anything else: 404 10031",
      answers: { 200: LobbyReadAnswer },
      hot: true,
    },
    async ({ caller, params }) => {
      if (isFirstParty(caller)) {
        const { lobby, members } = await lobbyWithMembers(caller, params.lobbyId, { asMember: true })
        return webClientView(lobby, members)
      }
      const { lobby, members } = await lobbyWithMembers(caller, params.lobbyId)
      const text = restText(lobby, members, caller.kind === 'bot')
      return typeof text === 'string' ? new JsonText(text) : text.then((t) => new JsonText(t))
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/lobbies',
      auth: BEARER,
      tag,
      summary: `The user's lobbies, newest first, at most ${USER_LOBBIES_LISTED}: its application's (the web client's first-party token: every application's), members named as GET /lobbies/{id} shows them to it`,
      answers: { 200: LobbyReadList },
    },
    async ({ caller }) => await userLobbies(caller as BearerCaller, USER_LOBBIES_LISTED),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/lobbies/:lobbyId',
      auth: APP,
      tag,
      summary: 'Change a lobby; members replaces the member list',
      body: PatchLobbySchema,
      answers: { 200: LobbyAnswer },
    },
    async ({ caller, params, body }) => {
      const lobby = await lobbyOf(caller, params.lobbyId)
      const input = camelKeys(body)
      const url = input.overrideEventWebhooksUrl
      if (!url) return patchLobby(lobby, input)
      // PINGed before the write; the lobby is read again after the wait (it may have changed or gone meanwhile).
      await verifyOverrideUrl(lobby.applicationId, url, lobby.overrideEventWebhooksUrl)
      return patchLobby(await lobbyOf(caller, params.lobbyId), input)
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/lobbies/:lobbyId',
      auth: APP,
      tag,
      summary: 'Delete a lobby',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      const app = appCaller(caller)
      const lobby = isSnowflake(params.lobbyId) ? await cachedLobby(params.lobbyId) : undefined
      // Idempotent: an already deleted lobby is fine; another application's lobby is not found.
      if (lobby && lobby.applicationId !== app.applicationId) throw Errors.unknownLobby()
      if (lobby) await deleteLobby(lobby.id)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/lobbies/:lobbyId/members/@me',
      auth: OAUTH2,
      tag,
      summary: 'Leave a lobby (not one created with POST /lobbies: 403 50001)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      const lobby = await lobbyOf(caller, params.lobbyId, { bearerMustBeMember: false, asMember: true })
      // Spec §4.1: clients cannot leave a lobby created with POST /lobbies (the application manages its members).
      if (caller.kind === 'bearer' && lobby.createdVia === 'post') throw Errors.missingAccess()
      await removeMember(lobby, caller.userId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/lobbies/:lobbyId/members/:userId',
      auth: APP,
      tag,
      summary: 'Add or update a member',
      body: PutMemberSchema,
      answers: { 200: LobbyMemberAnswer },
    },
    async ({ caller, params, body }) => {
      const lobby = await lobbyOf(caller, params.lobbyId)
      if (!isSnowflake(params.userId)) throw Errors.unknownUser()
      return putMember(lobby, { id: params.userId, metadata: body?.metadata, flags: body?.flags })
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/lobbies/:lobbyId/members/:userId',
      auth: APP,
      tag,
      summary: 'Remove a member',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      const lobby = await lobbyOf(caller, params.lobbyId)
      if (isSnowflake(params.userId)) await removeMember(lobby, params.userId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/lobbies/:lobbyId/members/bulk',
      auth: APP,
      tag,
      summary: 'Add, update and remove up to 25 members',
      body: BulkSchema,
      answers: { 200: LobbyMembersAnswer },
    },
    async ({ caller, params, body }) =>
      bulkMembers(
        await lobbyOf(caller, params.lobbyId),
        body.map(({ id, metadata, flags, remove_member }) => ({ id, metadata, flags, remove_member: !!remove_member })),
      ),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/lobbies/:lobbyId/messages',
      auth: OAUTH2,
      tag,
      summary: 'Recent lobby messages, newest first',
      query: MessagesQuery,
      answers: { 200: LobbyMessagesAnswer },
      hot: true,
    },
    async ({ caller, params, query }) =>
      // The lobby, the page and its authors in one snapshot (one read transaction).
      await reading(async () => {
        const lobby = await lobbyOf(caller, params.lobbyId, { asMember: true })
        return new JsonText(await readMessages(lobby, paging(query(), MESSAGES_MAX_LIMIT, MESSAGES_DEFAULT_LIMIT)))
      }),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/lobbies/:lobbyId/messages',
      auth: OAUTH2,
      tag,
      summary:
        'Send a lobby message (enforce_nonce: a retry with the same nonce within 5 minutes answers the original, 200)',
      body: MessageSchema,
      answers: { 200: LobbyMessageAnswer, 201: LobbyMessageAnswer },
      limit: { limit: 10, windowMs: 1000 },
      hot: true,
    },
    // The body was checked; then the lobby, then the message (group commit).
    async ({ caller, params, body }) => {
      const access = () => lobbyOf(caller, params.lobbyId, { firstLookCached: true, asMember: true })
      await access()
      const { message, created } = await postMessage(access, caller.userId, {
        content: body.content,
        metadata: body.metadata,
        flags: body.flags,
        nonce: body.nonce,
        enforceNonce: body.enforce_nonce,
        tts: body.tts,
      })
      // A retry answered by enforce_nonce is the original message, 200.
      return new JsonText(JSON.stringify(message), created ? 201 : 200)
    },
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/lobbies/:lobbyId/messages/:messageId/moderation-metadata',
      auth: APP,
      tag,
      summary:
        "Set a message's moderation metadata (LOBBY_MESSAGE_UPDATE; MESSAGE_UPDATE for its copy in a linked channel)",
      body: ModerationMetadataSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params, body }) => {
      const access = () => lobbyOf(caller, params.lobbyId)
      await access()
      if (!isSnowflake(params.messageId)) throw Errors.unknownMessage()
      await moderateMessage(access, params.messageId, body ?? {})
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/lobbies/:lobbyId/members/@me/invites',
      auth: OAUTH2,
      tag,
      summary: 'An invite to the linked channel only the current user can accept',
      answers: { 200: LobbyInviteAnswer },
    },
    async ({ caller, params }) =>
      inviteToLinkedChannel(appCaller(caller), await lobbyOf(caller, params.lobbyId), caller.userId),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/lobbies/:lobbyId/members/:userId/invites',
      auth: OAUTH2,
      tag,
      summary: 'An invite to the linked channel only this member can accept',
      answers: { 200: LobbyInviteAnswer },
    },
    async ({ caller, params }) => {
      const lobby = await lobbyOf(caller, params.lobbyId)
      if (!isSnowflake(params.userId)) throw Errors.unknownUser()
      return inviteToLinkedChannel(appCaller(caller), lobby, params.userId)
    },
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/lobbies/:lobbyId/channel-linking',
      auth: OAUTH2,
      tag,
      summary: 'Link a guild text channel to the lobby, or unlink it (channel_id null or absent)',
      body: LinkSchema,
      answers: { 200: LobbyAnswer },
    },
    async ({ caller, params, body }) =>
      setLinkedChannel(appCaller(caller), await lobbyOf(caller, params.lobbyId), body?.channel_id),
  ),
]
