// REST for the guild model: guilds, roles, members, channels, messages, invites.
import { t, type TSchema } from 'elysia'
import { camelKeys } from '../http/camel'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { paging } from '../http/form'
import { json, JsonText, noContent } from '../http/respond'
import { guildAccess } from './access'
import { createChannel, deleteChannel, getChannel, listChannels, moveChannels, updateChannel } from './channels'
import { createGuild, deleteGuild, kickMember, leaveGuild, myGuilds, renameGuild } from './lifecycle'
import { createInvite, deleteInvite, joinGuildByInvite, listInvites, lookupInvite } from './invites'
import { auditReason, banUser, getBan, listBans, unbanUser } from './bans'
import { MAX_BANS_PAGE, MAX_MEMBER_SEARCH } from './limits'
import { editMember, guildMember, searchMembers } from './members'
import { postMessage, readMessages } from './messages'
import { createRole, deleteRole, listRoles, moveRoles, setMemberRole, updateRole } from './roles'
import {
  Channel,
  DmChannel,
  CreateChannelSchema,
  CreateGuildSchema,
  Guild,
  Invite,
  InviteSchema,
  Member,
  MemberEditMeSchema,
  MemberEditSchema,
  MemberSearchQuery,
  MembersQuery,
  Message,
  MessageSchema,
  MessagesQuery,
  MyGuildsQuery,
  PartialGuilds,
  PatchChannelSchema,
  PatchGuildSchema,
  Role,
  RolePositionsSchema,
  RoleSchema,
  Ban,
  BanSchema,
  BansQuery,
  ChannelPositionsSchema,
} from './schemas'
import { serializeGuild, serializeMembers } from './serialize'
import { guildMembers } from './store'

/** Guild routes take a user session or a bot; an OAuth2 token reads only the caller's guild list. */
const auth: ('user' | 'bot')[] = ['user', 'bot']

const list = (item: TSchema, description: string) => t.Array(item, { description })

/** The guilds domain's endpoints (http/endpoint.ts): guilds, members, roles, channels, messages, invites. */
export const guildEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/guilds',
      auth,
      tag: 'guilds',
      summary: 'Create a guild; the caller owns it',
      body: CreateGuildSchema,
      answers: { 201: Guild },
    },
    async ({ caller, body }) => json(await createGuild(caller.userId, body.name), 201),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId',
      auth,
      tag: 'guilds',
      summary: 'Get a guild',
      answers: { 200: Guild },
    },
    async ({ caller, params }) => await serializeGuild((await guildAccess(params.guildId, caller.userId)).guild),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/guilds/:guildId',
      auth,
      tag: 'guilds',
      summary: 'Rename a guild (MANAGE_GUILD): GUILD_UPDATE',
      body: PatchGuildSchema,
      answers: { 200: Guild },
    },
    ({ caller, params, body }) => renameGuild(caller.userId, params.guildId, body.name),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/guilds/:guildId',
      auth,
      tag: 'guilds',
      summary: 'Delete a guild (owner)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await deleteGuild(caller.userId, params.guildId), noContent()),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/guilds',
      auth: { kinds: ['user', 'bot', 'bearer'], scope: 'guilds' },
      tag: 'guilds',
      summary: 'Guilds of the caller',
      query: MyGuildsQuery,
      answers: { 200: PartialGuilds },
    },
    ({ caller, query }) => myGuilds(caller.userId, paging(query(), 200, 200)),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/users/@me/guilds/:guildId',
      auth,
      tag: 'guilds',
      summary: 'Leave a guild (not the owner)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await leaveGuild(caller.userId, params.guildId), noContent()),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/members',
      auth,
      tag: 'guilds',
      summary: 'List members',
      query: MembersQuery,
      answers: { 200: list(Member, 'Members in user id order') },
    },
    async ({ caller, params, query }) => {
      await guildAccess(params.guildId, caller.userId)
      const page = paging(query(), 1000, 1)
      const rows = await guildMembers(params.guildId, page.limit, page.after ?? '0')
      return await serializeMembers(params.guildId, rows)
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/members/search',
      auth,
      tag: 'guilds',
      summary: 'Members whose username or nickname starts with `query`, in user id order',
      query: MemberSearchQuery,
      answers: { 200: list(Member, 'Members whose username or nickname starts with the query') },
    },
    async ({ caller, params, query }) => {
      const { query: prefix, limit } = query()
      const page = paging({ limit }, MAX_MEMBER_SEARCH, 1)
      return await searchMembers(caller.userId, params.guildId, prefix, page.limit)
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/members/:userId',
      auth,
      tag: 'guilds',
      summary: 'Get a member',
      answers: { 200: Member },
    },
    async ({ caller, params }) => await guildMember(caller.userId, params.guildId, params.userId),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/guilds/:guildId/members/@me',
      auth,
      tag: 'guilds',
      summary: "Change the caller's own nickname (CHANGE_NICKNAME): GUILD_MEMBER_UPDATE",
      body: MemberEditMeSchema,
      answers: { 200: Member },
    },
    async ({ caller, params, body }) => await editMember(caller.userId, params.guildId, caller.userId, body),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/guilds/:guildId/members/:userId',
      auth,
      tag: 'guilds',
      summary: 'Change a member: nickname (MANAGE_NICKNAMES), role list (MANAGE_ROLES): GUILD_MEMBER_UPDATE',
      body: MemberEditSchema,
      answers: { 200: Member },
    },
    async ({ caller, params, body }) =>
      // `/members/%40me` (discord.js encodes the @) reaches this route: it is the caller's own nickname, as @me.
      params.userId === '@me'
        ? await editMember(caller.userId, params.guildId, caller.userId, { nick: body.nick })
        : await editMember(caller.userId, params.guildId, params.userId, body),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/guilds/:guildId/members/:userId',
      auth,
      tag: 'guilds',
      summary: 'Kick a member (KICK_MEMBERS)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await kickMember(caller.userId, params.guildId, params.userId), noContent()),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/bans',
      auth,
      tag: 'guilds',
      summary: 'Bans in user id order (BAN_MEMBERS), by `limit`, `before`, `after`',
      query: BansQuery,
      answers: { 200: list(Ban, 'Bans in user id order') },
    },
    async ({ caller, params, query }) =>
      await listBans(caller.userId, params.guildId, paging(query(), MAX_BANS_PAGE, MAX_BANS_PAGE)),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/bans/:userId',
      auth,
      tag: 'guilds',
      summary: 'One ban (BAN_MEMBERS)',
      answers: { 200: Ban },
    },
    async ({ caller, params }) => await getBan(caller.userId, params.guildId, params.userId),
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/guilds/:guildId/bans/:userId',
      auth,
      tag: 'guilds',
      summary:
        'Ban a user (BAN_MEMBERS; X-Audit-Log-Reason kept): removed from the guild, its recent messages deleted; GUILD_BAN_ADD',
      body: t.Optional(BanSchema),
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params, body, request }) => (
      await banUser(
        caller.userId,
        params.guildId,
        params.userId,
        body ?? {},
        auditReason(request.headers.get('x-audit-log-reason')),
      ),
      noContent()
    ),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/guilds/:guildId/bans/:userId',
      auth,
      tag: 'guilds',
      summary: 'Lift a ban (BAN_MEMBERS): GUILD_BAN_REMOVE',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await unbanUser(caller.userId, params.guildId, params.userId), noContent()),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/roles',
      auth,
      tag: 'roles',
      summary: 'List roles',
      answers: { 200: list(Role, 'Roles by position') },
    },
    ({ caller, params }) => listRoles(caller.userId, params.guildId),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/guilds/:guildId/roles',
      auth,
      tag: 'roles',
      summary: 'Create a role (MANAGE_ROLES)',
      body: t.Optional(RoleSchema),
      answers: { 200: Role },
    },
    ({ caller, params, body }) => createRole(caller.userId, params.guildId, body ?? {}),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/guilds/:guildId/roles',
      auth,
      tag: 'roles',
      summary: "Move roles (MANAGE_ROLES; below the caller's highest): GUILD_ROLE_UPDATE for each role moved",
      body: RolePositionsSchema,
      answers: { 200: list(Role, 'Roles by position') },
    },
    ({ caller, params, body }) => moveRoles(caller.userId, params.guildId, body),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/guilds/:guildId/roles/:roleId',
      auth,
      tag: 'roles',
      summary: 'Edit a role (MANAGE_ROLES)',
      body: RoleSchema,
      answers: { 200: Role },
    },
    ({ caller, params, body }) => updateRole(caller.userId, params.guildId, params.roleId, body),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/guilds/:guildId/roles/:roleId',
      auth,
      tag: 'roles',
      summary: 'Delete a role (MANAGE_ROLES)',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (await deleteRole(caller.userId, params.guildId, params.roleId), noContent()),
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/guilds/:guildId/members/:userId/roles/:roleId',
      auth,
      tag: 'roles',
      summary: 'Give a member a role',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await setMemberRole(caller.userId, params.guildId, params.userId, params.roleId, true), noContent()
    ),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/guilds/:guildId/members/:userId/roles/:roleId',
      auth,
      tag: 'roles',
      summary: 'Take a role from a member',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => (
      await setMemberRole(caller.userId, params.guildId, params.userId, params.roleId, false), noContent()
    ),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/channels',
      auth,
      tag: 'channels',
      summary: 'List channels',
      answers: { 200: list(Channel, 'Channels by position') },
    },
    ({ caller, params }) => listChannels(caller.userId, params.guildId),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/guilds/:guildId/channels',
      auth,
      tag: 'channels',
      summary: 'Create a channel (MANAGE_CHANNELS)',
      body: CreateChannelSchema,
      answers: { 201: Channel },
    },
    async ({ caller, params, body }) => json(await createChannel(caller.userId, params.guildId, body), 201),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/guilds/:guildId/channels',
      auth,
      tag: 'channels',
      summary: 'Move channels (MANAGE_CHANNELS): CHANNEL_UPDATE for each channel moved',
      body: ChannelPositionsSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params, body }) => (await moveChannels(caller.userId, params.guildId, body), noContent()),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId',
      auth,
      tag: 'channels',
      summary: "Get a channel (a guild's, or a DM the caller is a recipient of)",
      answers: { 200: t.Union([Channel, DmChannel]) },
    },
    ({ caller, params }) => getChannel(caller.userId, params.channelId),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/channels/:channelId',
      auth,
      tag: 'channels',
      summary: 'Edit a channel (MANAGE_CHANNELS)',
      body: PatchChannelSchema,
      answers: { 200: Channel },
    },
    ({ caller, params, body }) => updateChannel(caller.userId, params.channelId, body),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/channels/:channelId',
      auth,
      tag: 'channels',
      summary: 'Delete a channel (MANAGE_CHANNELS)',
      answers: { 200: Channel },
    },
    ({ caller, params }) => deleteChannel(caller.userId, params.channelId),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId/messages',
      auth,
      tag: 'messages',
      summary: 'Read messages, newest first (READ_MESSAGE_HISTORY)',
      query: MessagesQuery,
      answers: { 200: list(Message, 'Messages, newest first') },
      hot: true,
    },
    async ({ caller, params, query }) =>
      new JsonText(await readMessages(caller.userId, params.channelId, paging(query(), 100, 50))),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/channels/:channelId/messages',
      auth,
      tag: 'messages',
      summary: 'Send a message (SEND_MESSAGES): content, embeds or both',
      body: MessageSchema,
      answers: { 200: Message },
    },
    ({ caller, params, body }) => postMessage(caller.userId, params.channelId, body),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/channels/:channelId/invites',
      auth,
      tag: 'invites',
      summary: "The channel's usable invites, with their counts (MANAGE_CHANNELS)",
      answers: { 200: list(Invite, 'Invites, oldest first') },
    },
    async ({ caller, params }) => await listInvites(caller.userId, { channelId: params.channelId }),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/guilds/:guildId/invites',
      auth,
      tag: 'invites',
      summary: "The guild's usable invites, with their counts (MANAGE_GUILD)",
      answers: { 200: list(Invite, 'Invites, oldest first') },
    },
    async ({ caller, params }) => await listInvites(caller.userId, { guildId: params.guildId }),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/channels/:channelId/invites',
      auth,
      tag: 'invites',
      summary: 'Create an invite (CREATE_INSTANT_INVITE)',
      body: InviteSchema,
      answers: { 200: Invite },
    },
    ({ caller, params, body }) => createInvite(caller.userId, params.channelId, camelKeys(body ?? {})),
  ),
  endpoint(
    // Anyone may look an invite up.
    {
      method: 'GET',
      path: '/invites/:code',
      auth: null,
      tag: 'invites',
      summary: 'Look up an invite',
      answers: { 200: Invite },
    },
    ({ params }) => lookupInvite(params.code),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/invites/:code',
      auth: 'user',
      tag: 'invites',
      summary: 'Accept an invite',
      answers: { 200: Invite },
    },
    ({ caller, params }) => joinGuildByInvite(caller.userId, params.code),
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/invites/:code',
      auth,
      tag: 'invites',
      summary: 'Delete an invite',
      answers: { 200: Invite },
    },
    ({ caller, params }) => deleteInvite(caller.userId, params.code),
  ),
]
