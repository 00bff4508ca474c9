// A bot added to a guild as a person adds one: discord.js's `client.generateInvite()` URL walked in Chromium as it is
// (the API's path: the server sends a browser on to its consent page, as Discord's API host does). The person
// picks a server, leaves the permissions offered ticked, authorizes, lands on the "authorized" page, and the bot's
// discord.js client gets the guild (GUILD_CREATE), with its managed role holding what was granted.
import { afterAll, expect } from 'bun:test'
import { Client, Events, type Guild, OAuth2Scopes, PermissionFlagsBits } from 'discord.js'
import type { Page } from 'playwright-core'
import { api, makeApp, makeUser, server } from '../helpers'
import { browserTest, expectText, signIn, useBrowser } from './browser'

const web = await useBrowser()
const clients: Client[] = []
afterAll(async () => {
  for (const client of clients) await client.destroy()
})

/** A logged-in discord.js client of a new application's bot (its application known: generateInvite needs it). */
async function botClient() {
  const { url } = await server()
  const app = await makeApp()
  const client = new Client({ intents: [], rest: { api: `${url}/api` } })
  clients.push(client)
  const ready = new Promise((resolve) => client.once(Events.ClientReady, resolve))
  await client.login(app.bot_token)
  await ready
  return { app, client }
}

/** Open the invite link as it is: the API's path, which sends a browser on to the consent page at WEB_URL. */
async function walk(page: Page, invite: string): Promise<void> {
  const url = new URL(invite)
  expect(url.pathname).toBe('/api/oauth2/authorize')
  await page.goto(invite)
  expect(page.url()).toBe(`${web.base}/oauth2/authorize${url.search}`)
}

browserTest(
  web,
  'generateInvite: the person picks a server and authorizes; the bot is in it with its managed role',
  async (page) => {
    const { app, client } = await botClient()
    const owner = await makeUser()
    const guild = (await api('POST', '/guilds', { token: owner.token, body: { name: 'Invite target' } })).body
    await api('POST', '/guilds', { token: owner.token, body: { name: 'Another server' } })
    const granted = PermissionFlagsBits.SendMessages | PermissionFlagsBits.ManageMessages
    const invite = client.generateInvite({
      scopes: [OAuth2Scopes.Bot, OAuth2Scopes.ApplicationsCommands],
      permissions: [PermissionFlagsBits.SendMessages, PermissionFlagsBits.ManageMessages],
    })
    expect(new URL(invite).searchParams.get('permissions')).toBe(`${granted}`)
    const joined = new Promise<Guild>((resolve) => client.on(Events.GuildCreate, resolve))

    await signIn(page, owner.token)
    await walk(page, invite)
    await expectText(page.locator('#app-name'), app.name)
    await expectText(page.locator('#wants'), 'wants to be added to a server')
    const picker = page.getByLabel('Add to server')
    expect(await picker.locator('option').allTextContents()).toEqual([
      'Select a server',
      'Invite target',
      'Another server',
    ])
    await picker.selectOption(guild.id)
    // The owner holds everything: both asked permissions are offered, ticked.
    for (const name of ['Send Messages', 'Manage Messages']) {
      const box = page.getByLabel(name, { exact: true })
      expect([await box.isChecked(), await box.isEnabled()]).toEqual([true, true])
    }
    await page.getByRole('button', { name: 'Authorize' }).click()
    await page.waitForURL('**/oauth2/authorized')
    await page.getByRole('heading', { name: 'Authorized' }).waitFor()

    const seen = await joined
    expect([seen.id, seen.name]).toEqual([guild.id, 'Invite target'])
    const me = await seen.members.fetchMe()
    const role = me.roles.botRole!
    expect([role.managed, role.tags?.botId, role.permissions.bitfield]).toEqual([true, client.user!.id, granted])
    expect(me.permissions.has(PermissionFlagsBits.ManageMessages)).toBe(true)
  },
  45_000,
)

browserTest(
  web,
  'generateInvite with a preselected, fixed server: a permission the person lacks is not offered nor granted',
  async (page) => {
    const { app, client } = await botClient()
    const owner = await makeUser()
    const guild = (await api('POST', '/guilds', { token: owner.token, body: { name: 'Managed here' } })).body
    // A manager: MANAGE_GUILD through a role, SEND_MESSAGES from @everyone, no MANAGE_MESSAGES.
    const manager = await makeUser()
    const channels = (await api('GET', `/guilds/${guild.id}/channels`, { token: owner.token })).body
    const code = (
      await api('POST', `/channels/${channels[0].id}/invites`, { token: owner.token, body: { max_age: 0 } })
    ).body.code
    expect((await api('POST', `/invites/${code}`, { token: manager.token })).status).toBe(200)
    const role = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'managers', permissions: `${PermissionFlagsBits.ManageGuild}` },
    })
    await api('PUT', `/guilds/${guild.id}/members/${manager.id}/roles/${role.body.id}`, { token: owner.token })

    const invite = client.generateInvite({
      scopes: [OAuth2Scopes.Bot],
      permissions: [PermissionFlagsBits.SendMessages, PermissionFlagsBits.ManageMessages],
      guild: guild.id,
      disableGuildSelect: true,
    })
    const joined = new Promise<Guild>((resolve) => client.on(Events.GuildCreate, resolve))
    await signIn(page, manager.token)
    await walk(page, invite)
    const picker = page.getByLabel('Add to server')
    await expectText(page.locator('#app-name'), app.name)
    expect([await picker.inputValue(), await picker.isDisabled()]).toEqual([guild.id, true])
    const send = page.getByLabel('Send Messages', { exact: true })
    const manage = page.getByLabel('Manage Messages', { exact: true })
    expect([await send.isChecked(), await send.isEnabled()]).toEqual([true, true])
    expect([await manage.isChecked(), await manage.isEnabled()]).toEqual([false, false])
    await page.getByRole('button', { name: 'Authorize' }).click()
    await page.getByRole('heading', { name: 'Authorized' }).waitFor()

    const seen = await joined
    const botRole = (await seen.members.fetchMe()).roles.botRole!
    expect(botRole.permissions.bitfield).toBe(PermissionFlagsBits.SendMessages)
  },
  45_000,
)
