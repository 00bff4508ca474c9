// REST for one channel message and what hangs on it: reading, editing and deleting it, bulk deletion, typing, pins
// and reactions (the channel's pages and new messages are in routes.ts).
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { paging } from '../http/form'
import { noContent } from '../http/respond'
import { bulkDeleteMessages, deleteMessage, editMessage, getMessage, startTyping } from './message-changes'
import { MAX_PINS_PAGE, REACTIONS_DEFAULT_LIMIT, REACTIONS_MAX_LIMIT } from './limits'
import { parsedTime, timestampProblem } from './embed-fields'
import { listPins, pinsPage, setPinned } from './pins'
import { addReaction, clearReactions, reactionUsers, removeReaction } from './reactions'
import { BulkDeleteSchema, Message, MessageEditSchema, PinsPage, PinsQuery, ReactionsQuery } from './schemas'

const auth: ('user' | 'bot')[] = ['user', 'bot']
const tag = 'messages'
const EmojiParam = t.String({
  description: 'a unicode emoji, URL-encoded (custom emoji `name:id` are unknown here: 10014)',
  examples: ['%F0%9F%91%8D'],
})
const emoji = { emoji: EmojiParam }
const reactions = '/channels/:channelId/messages/:messageId/reactions'
const answers = { 204: NO_CONTENT }

/** Pin and unpin at `path`: Discord has them at /channels/{id}/messages/pins/{id} and at the older /pins/{id}. */
function pinRoutes(path: '/channels/:channelId/messages/pins/:messageId' | '/channels/:channelId/pins/:messageId') {
  return [
    endpoint(
      { method: 'PUT', path, auth, tag, summary: 'Pin a message (MANAGE_MESSAGES; 50 per channel)', answers },
      async ({ caller, params }) => (
        await setPinned(caller.userId, params.channelId, params.messageId, true), noContent()
      ),
    ),
    endpoint(
      { method: 'DELETE', path, auth, tag, summary: 'Unpin a message (MANAGE_MESSAGES)', answers },
      async ({ caller, params }) => (
        await setPinned(caller.userId, params.channelId, params.messageId, false), noContent()
      ),
    ),
  ]
}

/** The guilds domain's endpoints for single messages, pins and reactions (http/endpoint.ts). */
export const messageEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId/messages/:messageId',
      auth,
      tag,
      summary: 'Get a message (READ_MESSAGE_HISTORY)',
      answers: { 200: Message },
    },
    async ({ caller, params }) => await getMessage(caller.userId, params.channelId, params.messageId),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/channels/:channelId/messages/:messageId',
      auth,
      tag,
      summary: 'Edit a message (its author: content, embeds)',
      body: MessageEditSchema,
      answers: { 200: Message },
    },
    async ({ caller, params, body }) => await editMessage(caller.userId, params.channelId, params.messageId, body),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/channels/:channelId/messages/:messageId',
      auth,
      tag,
      summary: 'Delete a message (its author, or MANAGE_MESSAGES)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await deleteMessage(caller.userId, params.channelId, params.messageId), noContent()),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/channels/:channelId/messages/bulk-delete',
      auth,
      tag,
      summary: 'Delete 2-100 messages under 14 days old (MANAGE_MESSAGES)',
      body: BulkDeleteSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params, body }) => (
      await bulkDeleteMessages(caller.userId, params.channelId, body.messages), noContent()
    ),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/channels/:channelId/typing',
      auth,
      tag,
      summary: 'Show the caller typing (SEND_MESSAGES): TYPING_START',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await startTyping(caller.userId, params.channelId), noContent()),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId/messages/pins',
      auth,
      tag,
      summary: 'Pins with the time each was made, the latest first, by pages (`before`, `limit`)',
      query: PinsQuery,
      answers: { 200: PinsPage },
    },
    async ({ caller, params, query }) => {
      const { before, limit } = query()
      const problem = before ? timestampProblem(before) : undefined
      const refused: Record<string, [string, string]> = problem ? { before: [problem.code, problem.message] } : {}
      const page = paging({ limit }, MAX_PINS_PAGE, MAX_PINS_PAGE, refused)
      return await pinsPage(caller.userId, params.channelId, {
        limit: page.limit,
        before: before ? parsedTime(before) : undefined,
      })
    },
  ),
  ...pinRoutes('/channels/:channelId/messages/pins/:messageId'),
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId/pins',
      auth,
      tag,
      summary: 'Pinned messages, the latest pinned first (the older route: /messages/pins has the pin times)',
      answers: { 200: t.Array(Message, { description: 'Pinned messages (none without READ_MESSAGE_HISTORY)' }) },
    },
    async ({ caller, params }) => await listPins(caller.userId, params.channelId),
  ),
  ...pinRoutes('/channels/:channelId/pins/:messageId'),
  endpoint(
    {
      method: 'PUT',
      path: `${reactions}/:emoji/@me`,
      auth,
      tag,
      summary: 'React (READ_MESSAGE_HISTORY; ADD_REACTIONS for an emoji not yet there; 20 emoji per message)',
      params: emoji,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await addReaction(caller.userId, params.channelId, params.messageId, params.emoji), noContent()
    ),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: `${reactions}/:emoji/@me`,
      auth,
      tag,
      summary: "Remove the caller's reaction",
      params: emoji,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await removeReaction(caller.userId, params.channelId, params.messageId, params.emoji, caller.userId), noContent()
    ),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: `${reactions}/:emoji/:userId`,
      auth,
      tag,
      summary: "Remove a user's reaction (MANAGE_MESSAGES)",
      params: emoji,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await removeReaction(caller.userId, params.channelId, params.messageId, params.emoji, params.userId), noContent()
    ),
  ),
  endpoint(
    {
      method: 'GET',
      path: `${reactions}/:emoji`,
      auth,
      tag,
      summary: 'Users who reacted with an emoji, by id (READ_MESSAGE_HISTORY)',
      params: emoji,
      query: ReactionsQuery,
      answers: { 200: t.Array(PublicUser, { description: 'Users by id, after `after`' }) },
    },
    async ({ caller, params, query }) => {
      const { limit, after } = query()
      return await reactionUsers(
        caller.userId,
        params.channelId,
        params.messageId,
        params.emoji,
        paging({ limit, after }, REACTIONS_MAX_LIMIT, REACTIONS_DEFAULT_LIMIT),
      )
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: `${reactions}/:emoji`,
      auth,
      tag,
      summary: 'Remove every reaction with an emoji (MANAGE_MESSAGES)',
      params: emoji,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await clearReactions(caller.userId, params.channelId, params.messageId, params.emoji), noContent()
    ),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: reactions,
      auth,
      tag,
      summary: 'Remove every reaction (MANAGE_MESSAGES)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await clearReactions(caller.userId, params.channelId, params.messageId), noContent()
    ),
  ),
]
