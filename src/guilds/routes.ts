// REST for the guild model: guilds, roles, members, channels, messages, invites.
import { Elysia, t, type TSchema } from 'elysia'
import { doc, NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { paging } from '../http/form'
import { identity } from '../http/identity'
import { json, JsonText, noContent } from '../http/respond'
import { guildAccess } from './access'
import { createChannel, deleteChannel, getChannel, listChannels, updateChannel } from './channels'
import { createGuild, deleteGuild, kickMember, leaveGuild, myGuilds, renameGuild } from './lifecycle'
import { createInvite, deleteInvite, joinGuildByInvite, lookupInvite } from './invites'
import { postMessage, readMessages } from './messages'
import { createRole, deleteRole, listRoles, setMemberRole, updateRole } from './roles'
import {
  Channel,
  CreateChannelSchema,
  CreateGuildSchema,
  Guild,
  Invite,
  InviteSchema,
  Member,
  MembersQuery,
  Message,
  MessageSchema,
  MessagesQuery,
  MyGuildsQuery,
  PartialGuilds,
  PatchChannelSchema,
  PatchGuildSchema,
  Role,
  RoleSchema,
} from './schemas'
import { serializeGuild, serializeMembers } from './serialize'
import { guildMembers } from './store'

const auth = { auth: ['user', 'bot'] as ('user' | 'bot')[] }

const list = (item: TSchema, description: string) => t.Array(item, { description })

/** The guilds domain's declared endpoints (http/endpoint.ts); its other routes are the Elysia plugins below. */
export const guildEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId/messages',
      auth: auth.auth,
      tag: 'messages',
      summary: 'Read messages, newest first (READ_MESSAGE_HISTORY)',
      query: MessagesQuery,
      answers: { 200: list(Message, 'Messages, newest first') },
      hot: true,
    },
    async ({ caller, params, query }) =>
      new JsonText(await readMessages(caller.userId, params.channelId, paging(query(), 100, 50))),
  ),
]

export const guildRoutes = new Elysia()
  .use(identity)
  .post('/guilds', async ({ caller, body }) => json(await createGuild(caller.userId, body.name), 201), {
    ...auth,
    body: CreateGuildSchema,
    ...doc('guilds', 'Create a guild; the caller owns it', { 201: Guild }),
  })
  .get(
    '/guilds/:guildId',
    async ({ caller, params }) => await serializeGuild((await guildAccess(params.guildId, caller.userId)).guild),
    {
      ...auth,
      ...doc('guilds', 'Get a guild', { 200: Guild }),
    },
  )
  .patch(
    '/guilds/:guildId',
    async ({ caller, params, body }) => await renameGuild(caller.userId, params.guildId, body.name),
    {
      ...auth,
      body: PatchGuildSchema,
      ...doc('guilds', 'Rename a guild (owner)', { 200: Guild }),
    },
  )
  .delete(
    '/guilds/:guildId',
    async ({ caller, params }) => (await deleteGuild(caller.userId, params.guildId), noContent()),
    {
      ...auth,
      ...doc('guilds', 'Delete a guild (owner)', { 204: NO_CONTENT }),
    },
  )
  .get('/users/@me/guilds', async ({ caller, query }) => await myGuilds(caller.userId, paging(query, 200, 200)), {
    auth: { kinds: ['user', 'bot', 'bearer'], scope: 'guilds' },
    query: MyGuildsQuery,
    ...doc('guilds', 'Guilds of the caller', { 200: PartialGuilds }),
  })
  .delete(
    '/users/@me/guilds/:guildId',
    async ({ caller, params }) => (await leaveGuild(caller.userId, params.guildId), noContent()),
    {
      ...auth,
      ...doc('guilds', 'Leave a guild (not the owner)', { 204: NO_CONTENT }),
    },
  )
  .get(
    '/guilds/:guildId/members',
    async ({ caller, params, query }) => {
      await guildAccess(params.guildId, caller.userId)
      const page = paging(query, 1000, 1)
      const rows = await guildMembers(params.guildId, page.limit, page.after ?? '0')
      return await serializeMembers(params.guildId, rows)
    },
    {
      ...auth,
      query: MembersQuery,
      ...doc('guilds', 'List members', { 200: list(Member, 'Members in user id order') }),
    },
  )
  .delete(
    '/guilds/:guildId/members/:userId',
    async ({ caller, params }) => (await kickMember(caller.userId, params.guildId, params.userId), noContent()),
    {
      ...auth,
      ...doc('guilds', 'Kick a member (KICK_MEMBERS)', { 204: NO_CONTENT }),
    },
  )
  .get('/guilds/:guildId/roles', async ({ caller, params }) => await listRoles(caller.userId, params.guildId), {
    ...auth,
    ...doc('roles', 'List roles', { 200: list(Role, 'Roles by position') }),
  })
  .post(
    '/guilds/:guildId/roles',
    async ({ caller, params, body }) => await createRole(caller.userId, params.guildId, body ?? {}),
    {
      ...auth,
      body: t.Optional(RoleSchema),
      ...doc('roles', 'Create a role (MANAGE_ROLES)', { 200: Role }),
    },
  )
  .patch(
    '/guilds/:guildId/roles/:roleId',
    async ({ caller, params, body }) => await updateRole(caller.userId, params.guildId, params.roleId, body),
    {
      ...auth,
      body: RoleSchema,
      ...doc('roles', 'Edit a role (MANAGE_ROLES)', { 200: Role }),
    },
  )
  .delete(
    '/guilds/:guildId/roles/:roleId',
    async ({ caller, params }) => (await deleteRole(caller.userId, params.guildId, params.roleId), noContent()),
    {
      ...auth,
      ...doc('roles', 'Delete a role (MANAGE_ROLES)', { 204: NO_CONTENT }),
    },
  )
  .put(
    '/guilds/:guildId/members/:userId/roles/:roleId',
    async ({ caller, params }) => (
      await setMemberRole(caller.userId, params.guildId, params.userId, params.roleId, true), noContent()
    ),
    { ...auth, ...doc('roles', 'Give a member a role', { 204: NO_CONTENT }) },
  )
  .delete(
    '/guilds/:guildId/members/:userId/roles/:roleId',
    async ({ caller, params }) => (
      await setMemberRole(caller.userId, params.guildId, params.userId, params.roleId, false), noContent()
    ),
    { ...auth, ...doc('roles', 'Take a role from a member', { 204: NO_CONTENT }) },
  )

export const channelRoutes = new Elysia()
  .use(identity)
  .get('/guilds/:guildId/channels', async ({ caller, params }) => await listChannels(caller.userId, params.guildId), {
    ...auth,
    ...doc('channels', 'List channels', { 200: list(Channel, 'Channels by position') }),
  })
  .post(
    '/guilds/:guildId/channels',
    async ({ caller, params, body }) => json(await createChannel(caller.userId, params.guildId, body), 201),
    {
      ...auth,
      body: CreateChannelSchema,
      ...doc('channels', 'Create a channel (MANAGE_CHANNELS)', { 201: Channel }),
    },
  )
  .get('/channels/:channelId', async ({ caller, params }) => await getChannel(caller.userId, params.channelId), {
    ...auth,
    ...doc('channels', 'Get a channel', { 200: Channel }),
  })
  .patch(
    '/channels/:channelId',
    async ({ caller, params, body }) => await updateChannel(caller.userId, params.channelId, body),
    {
      ...auth,
      body: PatchChannelSchema,
      ...doc('channels', 'Edit a channel (MANAGE_CHANNELS)', { 200: Channel }),
    },
  )
  .delete('/channels/:channelId', async ({ caller, params }) => await deleteChannel(caller.userId, params.channelId), {
    ...auth,
    ...doc('channels', 'Delete a channel (MANAGE_CHANNELS)', { 200: Channel }),
  })
  .post(
    '/channels/:channelId/messages',
    ({ caller, params, body }) => postMessage(caller.userId, params.channelId, body),
    {
      ...auth,
      body: MessageSchema,
      ...doc('messages', 'Send a message (SEND_MESSAGES)', { 200: Message }),
    },
  )
  .post(
    '/channels/:channelId/invites',
    ({ caller, params, body }) =>
      createInvite(caller.userId, params.channelId, {
        maxAge: body?.max_age,
        maxUses: body?.max_uses,
        unique: body?.unique,
        temporary: body?.temporary,
        targetUserId: body?.target_user_id,
      }),
    { ...auth, body: InviteSchema, ...doc('invites', 'Create an invite (CREATE_INSTANT_INVITE)', { 200: Invite }) },
  )

export const inviteRoutes = new Elysia()
  .use(identity)
  .get(
    '/invites/:code',
    ({ params }) => lookupInvite(params.code),
    doc('invites', 'Look up an invite', { 200: Invite }),
  )
  .post('/invites/:code', ({ caller, params }) => joinGuildByInvite(caller.userId, params.code), {
    user: true,
    ...doc('invites', 'Accept an invite', { 200: Invite }),
  })
  .delete('/invites/:code', ({ caller, params }) => deleteInvite(caller.userId, params.code), {
    ...auth,
    ...doc('invites', 'Delete an invite', { 200: Invite }),
  })
