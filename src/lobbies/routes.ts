// Lobby endpoints (spec §4.1, WIRE.md §1). Application-only rows take a Bot token; OAuth2 rows take a Bearer token
// with lobbies.write or the creating application's Bot token. User tokens get 403 20002 from the auth rule.
import { Elysia, type TSchema } from 'elysia'
import { Errors, formError } from '../core/errors'
import { reading } from '../db/client'
import { isSnowflake } from '../core/snowflake'
import { doc, NO_CONTENT, type Answer } from '../http/docs'
import { identity } from '../http/identity'
import { laneGet, lanePost } from '../http/lane'
import { bodyCheck } from '../http/validation'
import { paging } from '../http/form'
import { json, JsonText, noContent } from '../http/respond'
import { appCaller, lobbyOf, lobbyOfMember, lobbyWithMembers } from './access'
import { OVERRIDE_FIELD, verifyOverrideUrl } from './event-webhooks'
import { createLobby, createOrJoinLobby, deleteLobby, patchLobby } from './lifecycle'
import {
  IDLE_TIMEOUT_MAX,
  IDLE_TIMEOUT_MIN,
  LOBBY_FLAGS_ALL,
  MEMBER_FLAGS_ALL,
  MESSAGES_DEFAULT_LIMIT,
  MESSAGES_MAX_LIMIT,
} from './limits'
import { bulkMembers, putMember, removeMember } from './members'
import { inviteToLinkedChannel, setLinkedChannel } from './channel-linking'
import { moderateMessage, postMessage, readMessages } from './messages'
import {
  BulkDoc,
  BulkSchema,
  CreateLobbyDoc,
  CreateLobbySchema,
  LinkDoc,
  LinkSchema,
  LobbyAnswer,
  LobbyInviteAnswer,
  LobbyMemberAnswer,
  LobbyMembersAnswer,
  LobbyMessageAnswer,
  LobbyMessagesAnswer,
  LobbyReadAnswer,
  MessageDoc,
  MessageSchema,
  MessagesQuery,
  ModerationMetadataDoc,
  PatchLobbyDoc,
  PatchLobbySchema,
  PutLobbyDoc,
  PutLobbySchema,
  PutMemberDoc,
} from './schemas'
import { memberView, restText } from './snapshots'
import { getLobby } from './store'
import { FormCheck } from './validate'

const APP = 'bot' as const
const OAUTH2 = { kinds: ['bot', 'bearer'] as ('bot' | 'bearer')[], scope: 'lobbies.write' }

/** GET /lobbies/{id} also takes user sessions (members only: the web client's lobby page). */
const READ_LOBBY = { kinds: ['user', 'bot', 'bearer'] as ('user' | 'bot' | 'bearer')[], scope: 'lobbies.write' }

/** GET /lobbies/{id}: Bun's router answers it through the lane (http/lane.ts); the Elysia route below documents it. */
export const lobbyGet = laneGet<'lobbyId'>('/lobbies/:lobbyId', READ_LOBBY, ({ caller, params }) => {
  if (caller.kind === 'user') {
    const { lobby, members } = lobbyOfMember(caller, params.lobbyId)
    return memberView(lobby, members)
  }
  const { lobby, members } = lobbyWithMembers(caller, params.lobbyId)
  const text = restText(lobby, members, caller.kind === 'bot')
  return typeof text === 'string' ? new JsonText(text) : text.then((t) => new JsonText(t))
})
/** GET /lobbies/{id}/messages, through the lane like GET /lobbies/{id}: the lobby, then the page (cached text). */
export const lobbyMessagesGet = laneGet<'lobbyId'>('/lobbies/:lobbyId/messages', OAUTH2, ({ caller, params, query }) =>
  // The lobby, the page and its authors in one snapshot (one read transaction).
  reading(() => {
    const lobby = lobbyOf(caller, params.lobbyId)
    return new JsonText(readMessages(lobby, paging(query(), MESSAGES_MAX_LIMIT, MESSAGES_DEFAULT_LIMIT)))
  }),
)
const messageBody = bodyCheck(MessageSchema)
/** POST /lobbies/{id}/messages, through the lane: the body's check, the lobby, then the message (group commit). */
export const lobbyMessagePost = lanePost<'lobbyId'>('/lobbies/:lobbyId/messages', OAUTH2, async (r) => {
  const body = messageBody(r.body)
  const access = () => lobbyOf(r.caller, r.params.lobbyId)
  access()
  const check = new FormCheck()
  const metadata = check.metadata('metadata', body.metadata)
  const flags = check.int('flags', body.flags, 0, 2 ** 31 - 1)
  check.done()
  const { message, created } = await postMessage(access, r.caller.userId, {
    content: body.content,
    metadata,
    flags,
    nonce: body.nonce,
    enforceNonce: body.enforce_nonce,
    tts: body.tts,
  })
  // A retry answered by enforce_nonce is the original message, 200.
  return new JsonText(JSON.stringify(message), created ? 201 : 200)
})
// `body`: the body as the docs show it (the route's own schema leaves FormCheck's fields open).
const detail = (summary: string, answers: Record<number, Answer>, body?: TSchema) =>
  doc('lobbies', summary, answers, { body }).detail

type MemberBody = { id: string; metadata?: unknown; flags?: unknown }

function checkMember(check: FormCheck, path: string, m: MemberBody) {
  return {
    id: m.id,
    metadata: check.metadata(`${path}metadata`, m.metadata),
    flags: check.int(`${path}flags`, m.flags, 0, MEMBER_FLAGS_ALL),
  }
}

function checkMembers(check: FormCheck, field: string, members: MemberBody[] | undefined) {
  return members?.map((m, i) => checkMember(check, `${field}.${i}.`, m))
}

const idle = (check: FormCheck, value: unknown) =>
  check.int('idle_timeout_seconds', value, IDLE_TIMEOUT_MIN, IDLE_TIMEOUT_MAX)
const lobbyFlags = (check: FormCheck, value: unknown) => check.int('flags', value, 0, LOBBY_FLAGS_ALL)
const overrideUrl = (check: FormCheck, value: unknown) => check.webhookUrl(OVERRIDE_FIELD, value)

/** PUT member bodies may be absent, empty or null: every field is optional and nullable. */
function memberBody(body: unknown): { metadata?: unknown; flags?: unknown } {
  if (body === undefined || body === null || body === '') return {}
  if (typeof body !== 'object' || Array.isArray(body))
    throw Errors.invalidFormBody({
      _errors: [{ code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }],
    })
  return body as { metadata?: unknown; flags?: unknown }
}

export const lobbiesRoutes = new Elysia()
  .use(identity)
  .post(
    '/lobbies',
    async ({ caller, body }) => {
      const app = appCaller(caller)
      const check = new FormCheck()
      const input = {
        metadata: check.metadata('metadata', body.metadata),
        members: checkMembers(check, 'members', body.members),
        idleTimeoutSeconds: idle(check, body.idle_timeout_seconds),
        flags: lobbyFlags(check, body.flags),
        overrideEventWebhooksUrl: overrideUrl(check, body.override_event_webhooks_url),
      }
      check.done()
      // The override is PINGed before anything is written (a refusal leaves no lobby behind).
      if (input.overrideEventWebhooksUrl) await verifyOverrideUrl(app.applicationId, input.overrideEventWebhooksUrl)
      return json(await createLobby(app, input), 201)
    },
    { auth: APP, body: CreateLobbySchema, detail: detail('Create a lobby', { 201: LobbyAnswer }, CreateLobbyDoc) },
  )
  .put(
    '/lobbies',
    ({ caller, body }) => {
      const check = new FormCheck()
      const input = {
        secret: body.secret,
        lobbyMetadata: check.metadata('lobby_metadata', body.lobby_metadata),
        memberMetadata: check.metadata('member_metadata', body.member_metadata),
        idleTimeoutSeconds: idle(check, body.idle_timeout_seconds),
        flags: lobbyFlags(check, body.flags),
      }
      check.done()
      return createOrJoinLobby(appCaller(caller), input)
    },
    {
      auth: OAUTH2,
      body: PutLobbySchema,
      detail: detail('Join the lobby with this secret, or create it', { 200: LobbyAnswer }, PutLobbyDoc),
    },
  )
  .get('/lobbies/:lobbyId', lobbyGet.handle, {
    auth: READ_LOBBY,
    detail: detail(
      "A lobby. Bot: its application's lobbies; OAuth2: its application's lobbies the user is in; user session (the web client): any lobby the user is in, as the Gateway shows it (members with `connected` and their public `user`, `voice_states`). Anything else: 404 10031",
      { 200: LobbyReadAnswer },
    ),
  })
  .patch(
    '/lobbies/:lobbyId',
    async ({ caller, params, body }) => {
      const lobby = lobbyOf(caller, params.lobbyId)
      const check = new FormCheck()
      const input = {
        metadata: check.metadata('metadata', body.metadata),
        members: checkMembers(check, 'members', body.members),
        idleTimeoutSeconds: idle(check, body.idle_timeout_seconds),
        flags: lobbyFlags(check, body.flags),
        overrideEventWebhooksUrl: overrideUrl(check, body.override_event_webhooks_url),
      }
      check.done()
      const url = input.overrideEventWebhooksUrl
      if (!url) return patchLobby(lobby, input)
      // PINGed before the write; the lobby is read again after the wait (it may have changed or gone meanwhile).
      await verifyOverrideUrl(lobby.applicationId, url, lobby.overrideEventWebhooksUrl)
      return patchLobby(lobbyOf(caller, params.lobbyId), input)
    },
    {
      auth: APP,
      body: PatchLobbySchema,
      detail: detail('Change a lobby; members replaces the member list', { 200: LobbyAnswer }, PatchLobbyDoc),
    },
  )
  .delete(
    '/lobbies/:lobbyId',
    async ({ caller, params }) => {
      const app = appCaller(caller)
      const lobby = isSnowflake(params.lobbyId) ? getLobby(params.lobbyId) : undefined
      // Idempotent: an already deleted lobby is fine; another application's lobby is not found.
      if (lobby && lobby.applicationId !== app.applicationId) throw Errors.unknownLobby()
      if (lobby) await deleteLobby(lobby.id)
      return noContent()
    },
    { auth: APP, detail: detail('Delete a lobby', { 204: NO_CONTENT }) },
  )
  .delete(
    '/lobbies/:lobbyId/members/@me',
    async ({ caller, params }) => {
      const lobby = lobbyOf(caller, params.lobbyId, { bearerMustBeMember: false })
      // Spec §4.1: clients cannot leave a lobby created with POST /lobbies (the application manages its members).
      if (caller.kind === 'bearer' && lobby.createdVia === 'post') throw Errors.missingAccess()
      await removeMember(lobby, caller.userId)
      return noContent()
    },
    {
      auth: OAUTH2,
      detail: detail('Leave a lobby (not one created with POST /lobbies: 403 50001)', { 204: NO_CONTENT }),
    },
  )
  .put(
    '/lobbies/:lobbyId/members/:userId',
    ({ caller, params, body }) => {
      const lobby = lobbyOf(caller, params.lobbyId)
      if (!isSnowflake(params.userId)) throw Errors.unknownUser()
      const check = new FormCheck()
      const input = checkMember(check, '', { ...memberBody(body), id: params.userId })
      check.done()
      return putMember(lobby, input)
    },
    { auth: APP, detail: detail('Add or update a member', { 200: LobbyMemberAnswer }, PutMemberDoc) },
  )
  .delete(
    '/lobbies/:lobbyId/members/:userId',
    async ({ caller, params }) => {
      const lobby = lobbyOf(caller, params.lobbyId)
      if (isSnowflake(params.userId)) await removeMember(lobby, params.userId)
      return noContent()
    },
    { auth: APP, detail: detail('Remove a member', { 204: NO_CONTENT }) },
  )
  .post(
    '/lobbies/:lobbyId/members/bulk',
    ({ caller, params, body }) => {
      const lobby = lobbyOf(caller, params.lobbyId)
      const check = new FormCheck()
      const items = body.map((item, i) => {
        const removal = item.remove_member
        if (removal !== undefined && removal !== null && typeof removal !== 'boolean')
          check.add(`${i}.remove_member`, 'BOOLEAN_TYPE_CONVERT', 'Must be either true or false.')
        return { ...checkMember(check, `${i}.`, item), remove_member: removal === true }
      })
      check.done()
      return bulkMembers(lobby, items)
    },
    {
      auth: APP,
      body: BulkSchema,
      detail: detail('Add, update and remove up to 25 members', { 200: LobbyMembersAnswer }, BulkDoc),
    },
  )
  .get('/lobbies/:lobbyId/messages', lobbyMessagesGet.handle, {
    auth: OAUTH2,
    query: MessagesQuery,
    detail: detail('Recent lobby messages, newest first', { 200: LobbyMessagesAnswer }),
  })
  .post('/lobbies/:lobbyId/messages', lobbyMessagePost.handle, {
    auth: OAUTH2,
    detail: detail(
      'Send a lobby message (enforce_nonce: a retry with the same nonce within 5 minutes answers the original, 200)',
      { 200: LobbyMessageAnswer, 201: LobbyMessageAnswer },
      MessageDoc,
    ),
  })
  .put(
    '/lobbies/:lobbyId/messages/:messageId/moderation-metadata',
    async ({ caller, params, body }) => {
      const access = () => lobbyOf(caller, params.lobbyId)
      access()
      if (!isSnowflake(params.messageId)) throw Errors.unknownMessage()
      const check = new FormCheck()
      const metadata = check.moderationMetadata(body)
      check.done()
      await moderateMessage(access, params.messageId, metadata)
      return noContent()
    },
    {
      auth: APP,
      detail: detail(
        "Set a message's moderation metadata (LOBBY_MESSAGE_UPDATE; MESSAGE_UPDATE for its copy in a linked channel)",
        { 204: NO_CONTENT },
        ModerationMetadataDoc,
      ),
    },
  )
  .post(
    '/lobbies/:lobbyId/members/@me/invites',
    ({ caller, params }) => inviteToLinkedChannel(appCaller(caller), lobbyOf(caller, params.lobbyId), caller.userId),
    {
      auth: OAUTH2,
      detail: detail('An invite to the linked channel only the current user can accept', { 200: LobbyInviteAnswer }),
    },
  )
  .post(
    '/lobbies/:lobbyId/members/:userId/invites',
    ({ caller, params }) => {
      const lobby = lobbyOf(caller, params.lobbyId)
      if (!isSnowflake(params.userId)) throw Errors.unknownUser()
      return inviteToLinkedChannel(appCaller(caller), lobby, params.userId)
    },
    {
      auth: OAUTH2,
      detail: detail('An invite to the linked channel only this member can accept', { 200: LobbyInviteAnswer }),
    },
  )
  .patch(
    '/lobbies/:lobbyId/channel-linking',
    ({ caller, params, body }) => {
      const lobby = lobbyOf(caller, params.lobbyId)
      const channelId = body?.channel_id
      if (channelId !== undefined && channelId !== null && !isSnowflake(channelId)) {
        throw formError({ channel_id: ['NUMBER_TYPE_COERCE', `Value "${String(channelId)}" is not snowflake.`] })
      }
      return setLinkedChannel(appCaller(caller), lobby, channelId as string | null | undefined)
    },
    {
      auth: OAUTH2,
      body: LinkSchema,
      detail: detail(
        'Link a guild text channel to the lobby, or unlink it (channel_id null or absent)',
        { 200: LobbyAnswer },
        LinkDoc,
      ),
    },
  )
