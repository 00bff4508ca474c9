import { addMember } from '../../src/guilds/lifecycle'
import { cachedGuild } from '../../src/guilds/store'
import { api, makeApp, makeUser } from '../helpers'

export type TestUser = Awaited<ReturnType<typeof makeUser>>

/** A guild owned by a new user, plus its default text channel. */
export async function makeGuild(name = 'Test Guild') {
  const owner = await makeUser()
  const created = await api('POST', '/guilds', { token: owner.token, body: { name } })
  if (created.status !== 201) throw new Error(`guild create: ${created.status} ${JSON.stringify(created.body)}`)
  const channels = await api('GET', `/guilds/${created.body.id}/channels`, { token: owner.token })
  const text = channels.body.find((c: { type: number }) => c.type === 0)
  return { owner, guild: created.body, channelId: text.id as string }
}

/** Bring a new user into the guild through an invite. */
export async function join(channelId: string, inviter: TestUser, user?: TestUser) {
  const member = user ?? (await makeUser())
  const invite = await api('POST', `/channels/${channelId}/invites`, {
    token: inviter.token,
    body: { max_age: 0, unique: true },
  })
  const r = await api('POST', `/invites/${invite.body.code}`, { token: member.token })
  if (r.status !== 200) throw new Error(`join: ${r.status} ${JSON.stringify(r.body)}`)
  return member
}

/** A guild owned by a new user, with a new application's bot as a member (its user: `bot`). */
export async function botInGuild(name?: string) {
  const app = await makeApp()
  const bot = (await api('GET', '/users/@me', { token: `Bot ${app.bot_token}` })).body
  const made = await makeGuild(name)
  await addMember((await cachedGuild(made.guild.id))!, bot.id)
  return { app, bot, ...made }
}
