// REST for the guild model: guilds, roles, members, channels, messages, invites.
import { Elysia, t } from 'elysia'
import { identity } from '../http/identity'
import { paging, queryString } from '../http/query'
import { noContent, json } from '../http/respond'
import { createChannel, deleteChannel, getChannel, listChannels, updateChannel } from './channels'
import { createGuild, deleteGuild, kickMember, leaveGuild, myGuilds, renameGuild } from './guilds'
import { createInvite, deleteInvite, joinGuildByInvite, lookupInvite } from './invites'
import { postMessage, readMessages } from './messages'
import { guildAccess } from './access'
import { createRole, deleteRole, listRoles, setMemberRole, updateRole } from './roles'
import { serializeGuild, serializeMember } from './serialize'
import { guildMembers } from './store'
import { findUser } from '../users/store'

const members = ['user', 'bot'] as const
const auth = { auth: [...members] }
const tags = (tag: string, summary: string) => ({ detail: { tags: [tag], summary } })
const snowflakeQuery = t.String({ pattern: '^\\d{1,20}$' })

const channelBody = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  type: t.Optional(t.Union([t.Literal(0), t.Literal(2)])),
  topic: t.Optional(t.Nullable(t.String({ maxLength: 1024 }))),
  position: t.Optional(t.Integer({ minimum: 0, maximum: 10000 })),
  nsfw: t.Optional(t.Boolean()),
}
const roleBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  permissions: t.Optional(t.String({ maxLength: 20 })),
  color: t.Optional(t.Integer({ minimum: 0, maximum: 0xffffff })),
  hoist: t.Optional(t.Boolean()),
  mentionable: t.Optional(t.Boolean()),
})

export const guildRoutes = new Elysia()
  .use(identity)
  .post('/guilds', ({ caller, body }) => json(createGuild(caller.userId, body.name), 201), {
    ...auth,
    body: t.Object({ name: t.String({ minLength: 2, maxLength: 100 }) }),
    ...tags('guilds', 'Create a guild; the caller owns it'),
  })
  .get('/guilds/:guildId', ({ caller, params }) => serializeGuild(guildAccess(params.guildId, caller.userId).guild), { ...auth, ...tags('guilds', 'Get a guild') })
  .patch('/guilds/:guildId', ({ caller, params, body }) => renameGuild(caller.userId, params.guildId, body.name), {
    ...auth,
    body: t.Object({ name: t.Optional(t.String({ minLength: 2, maxLength: 100 })) }),
    ...tags('guilds', 'Rename a guild (owner)'),
  })
  .delete('/guilds/:guildId', ({ caller, params }) => (deleteGuild(caller.userId, params.guildId), noContent()), { ...auth, ...tags('guilds', 'Delete a guild (owner)') })
  .get('/users/@me/guilds', ({ caller, query }) => myGuilds(caller.userId, paging(query, 200, 200)), {
    auth: { kinds: ['user', 'bot', 'bearer'], scope: 'guilds' },
    query: t.Object({ limit: queryString('integer 1-200, default 200'), before: queryString('snowflake'), after: queryString('snowflake') }),
    ...tags('guilds', 'Guilds of the caller'),
  })
  .delete('/users/@me/guilds/:guildId', async ({ caller, params }) => (await leaveGuild(caller.userId, params.guildId), noContent()), {
    ...auth,
    ...tags('guilds', 'Leave a guild (not the owner)'),
  })
  .get(
    '/guilds/:guildId/members',
    async ({ caller, params, query }) => {
      guildAccess(params.guildId, caller.userId)
      const page = paging(query, 1000, 1)
      const rows = guildMembers(params.guildId, page.limit, page.after ?? '0')
      return Promise.all(rows.map(async (m) => serializeMember(m, await findUser(m.userId))))
    },
    { ...auth, query: t.Object({ limit: queryString('integer 1-1000, default 1'), after: queryString('snowflake') }), ...tags('guilds', 'List members') },
  )
  .delete('/guilds/:guildId/members/:userId', async ({ caller, params }) => (await kickMember(caller.userId, params.guildId, params.userId), noContent()), {
    ...auth,
    ...tags('guilds', 'Kick a member (KICK_MEMBERS)'),
  })
  .get('/guilds/:guildId/roles', ({ caller, params }) => listRoles(caller.userId, params.guildId), { ...auth, ...tags('roles', 'List roles') })
  .post('/guilds/:guildId/roles', ({ caller, params, body }) => createRole(caller.userId, params.guildId, body ?? {}), {
    ...auth,
    body: t.Optional(roleBody),
    ...tags('roles', 'Create a role (MANAGE_ROLES)'),
  })
  .patch('/guilds/:guildId/roles/:roleId', ({ caller, params, body }) => updateRole(caller.userId, params.guildId, params.roleId, body), {
    ...auth,
    body: roleBody,
    ...tags('roles', 'Edit a role (MANAGE_ROLES)'),
  })
  .delete('/guilds/:guildId/roles/:roleId', ({ caller, params }) => (deleteRole(caller.userId, params.guildId, params.roleId), noContent()), {
    ...auth,
    ...tags('roles', 'Delete a role (MANAGE_ROLES)'),
  })
  .put('/guilds/:guildId/members/:userId/roles/:roleId', async ({ caller, params }) => (await setMemberRole(caller.userId, params.guildId, params.userId, params.roleId, true), noContent()), {
    ...auth,
    ...tags('roles', 'Give a member a role'),
  })
  .delete('/guilds/:guildId/members/:userId/roles/:roleId', async ({ caller, params }) => (await setMemberRole(caller.userId, params.guildId, params.userId, params.roleId, false), noContent()), {
    ...auth,
    ...tags('roles', 'Take a role from a member'),
  })

export const channelRoutes = new Elysia()
  .use(identity)
  .get('/guilds/:guildId/channels', ({ caller, params }) => listChannels(caller.userId, params.guildId), { ...auth, ...tags('channels', 'List channels') })
  .post('/guilds/:guildId/channels', ({ caller, params, body }) => json(createChannel(caller.userId, params.guildId, body), 201), {
    ...auth,
    body: t.Object(channelBody),
    ...tags('channels', 'Create a channel (MANAGE_CHANNELS)'),
  })
  .get('/channels/:channelId', ({ caller, params }) => getChannel(caller.userId, params.channelId), { ...auth, ...tags('channels', 'Get a channel') })
  .patch('/channels/:channelId', ({ caller, params, body }) => updateChannel(caller.userId, params.channelId, body), {
    ...auth,
    body: t.Object({ ...channelBody, name: t.Optional(channelBody.name), type: t.Optional(t.Never()) }),
    ...tags('channels', 'Edit a channel (MANAGE_CHANNELS)'),
  })
  .delete('/channels/:channelId', ({ caller, params }) => deleteChannel(caller.userId, params.channelId), { ...auth, ...tags('channels', 'Delete a channel (MANAGE_CHANNELS)') })
  .post('/channels/:channelId/messages', ({ caller, params, body }) => postMessage(caller.userId, params.channelId, body), {
    ...auth,
    body: t.Object({ content: t.String({ minLength: 1, maxLength: 2000 }), nonce: t.Optional(t.Union([t.String({ maxLength: 25 }), t.Integer()])), enforce_nonce: t.Optional(t.Boolean()) }),
    ...tags('messages', 'Send a message (SEND_MESSAGES)'),
  })
  .get('/channels/:channelId/messages', ({ caller, params, query }) => readMessages(caller.userId, params.channelId, paging(query, 100, 50)), {
    ...auth,
    query: t.Object({
      limit: queryString('integer 1-100, default 50'),
      before: queryString('snowflake'),
      after: queryString('snowflake'),
      around: queryString('snowflake'),
    }),
    ...tags('messages', 'Read messages, newest first (READ_MESSAGE_HISTORY)'),
  })
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
    {
      ...auth,
      body: t.Optional(
        t.Object({
          max_age: t.Optional(t.Integer({ minimum: 0, maximum: 604800 })),
          max_uses: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
          unique: t.Optional(t.Boolean()),
          temporary: t.Optional(t.Boolean()),
          target_type: t.Optional(t.Integer({ minimum: 1, maximum: 2 })),
          target_user_id: t.Optional(t.Nullable(snowflakeQuery)),
        }),
      ),
      ...tags('invites', 'Create an invite (CREATE_INSTANT_INVITE)'),
    },
  )

export const inviteRoutes = new Elysia()
  .use(identity)
  .get('/invites/:code', ({ params }) => lookupInvite(params.code), tags('invites', 'Look up an invite'))
  .post('/invites/:code', ({ caller, params }) => joinGuildByInvite(caller.userId, params.code), { auth: 'user', ...tags('invites', 'Accept an invite') })
  .delete('/invites/:code', ({ caller, params }) => deleteInvite(caller.userId, params.code), { ...auth, ...tags('invites', 'Delete an invite') })
