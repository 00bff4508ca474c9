// The server under fuzzing, in its own process (spawned by tests/proof/target-client.ts): its own database, rate-limit
// counters and Object.prototype, so nothing a fuzz run does reaches the shared test server, and what it does to this
// process can be inspected (prototype pollution, RSS, database integrity) over IPC.
import { Database } from 'bun:sqlite'
import { createSession } from '../../src/accounts/sessions'
import { config } from '../../src/config'
import { rawDatabase } from '../../src/db/client'
import { wiring } from '../../src/gateway/bus'
import { api, makeApp, makeUser, onPostgres, server } from '../helpers'
import { bearerFor } from '../oauth2/helpers'

const prototypeNames = () =>
  [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) =>
    Object.getOwnPropertyNames(p).sort().join(','),
  )
const pristine = prototypeNames()
const secret = `SECRET${Date.now().toString(36)}x${Math.random().toString(36).slice(2, 10)}`

async function fixtures() {
  const running = await server()
  const [alice, bob] = [await makeUser(), await makeUser()]
  const [game, other, bobsGame] = [await makeApp(), await makeApp(), await makeApp()]
  // Bob's things, which no request of the fuzz (as nobody, Alice, the game's bot or Alice's bearer) may ever see.
  const bobBearer = await bearerFor(bob, bobsGame)
  const bobGuild = await api('POST', '/guilds', { token: bob.token, body: { name: `${secret} guild` } })
  const bobChannel = (await api('GET', `/guilds/${bobGuild.body.id}/channels`, { token: bob.token })).body[0]
  await api('POST', `/channels/${bobChannel.id}/messages`, { token: bob.token, body: { content: `${secret} message` } })
  const bobLobby = await api('POST', '/lobbies', {
    token: `Bot ${bobsGame.bot_token}`,
    body: { metadata: { k: `${secret} lobby` }, members: [{ id: bob.id, metadata: { m: secret } }] },
  })
  await api('POST', `/lobbies/${bobLobby.body.id}/messages`, {
    token: bobBearer,
    body: { content: `${secret} lobby message` },
  })
  const schemas = running.app.routes
    .filter((r) => r.path.startsWith('/api/v9/'))
    .map((r) => {
      const hooks = (r.hooks ?? {}) as Record<string, unknown>
      return { method: r.method, path: r.path, body: hooks.body ?? null, query: hooks.query ?? null }
    })
  return {
    url: running.url,
    secret,
    schemas: JSON.parse(JSON.stringify(schemas)),
    alice: { id: alice.id, email: alice.email, password: alice.password, username: alice.username },
    bob: {
      id: bob.id,
      email: bob.email,
      token: bob.token,
      bearer: bobBearer,
      guild: bobGuild.body.id,
      channel: bobChannel.id,
      lobby: bobLobby.body.id,
    },
    game: { id: game.id, bot: `Bot ${game.bot_token}`, secret: game.client_secret },
    other: { id: other.id, bot: `Bot ${other.bot_token}`, secret: other.client_secret },
    aliceId: alice.id,
  }
}

let ctx: Awaited<ReturnType<typeof fixtures>>

/** Fresh credentials and objects for Alice (a fuzzed request may have logged her out, deleted her lobby, ...). */
async function world() {
  const { token } = await createSession(ctx.aliceId, { platform: 'fuzz' })
  const appLike = { id: ctx.game.id, client_secret: ctx.game.secret, bot_token: ctx.game.bot.slice(4) }
  const user = { id: ctx.aliceId, token }
  const bearer = await bearerFor(user, appLike)
  const narrowBearer = await bearerFor(user, appLike, 'identify')
  const guild = (await api('POST', '/guilds', { token, body: { name: 'fuzz guild' } })).body
  const channel = (await api('GET', `/guilds/${guild.id}/channels`, { token })).body[0]
  const role = (await api('POST', `/guilds/${guild.id}/roles`, { token, body: { name: 'fuzz role' } })).body
  const invite = (await api('POST', `/channels/${channel.id}/invites`, { token, body: { max_uses: 5 } })).body
  const message = (await api('POST', `/channels/${channel.id}/messages`, { token, body: { content: 'hello' } })).body
  const lobby = (
    await api('POST', '/lobbies', {
      token: ctx.game.bot,
      body: { members: [{ id: ctx.aliceId }], metadata: { a: 'b' } },
    })
  ).body
  return {
    token,
    bearer,
    narrowBearer,
    guild: guild.id,
    channel: channel.id,
    role: role.id,
    invite: invite.code,
    message: message.id,
    lobby: lobby.id,
  }
}

function databaseCheck() {
  // On PostgreSQL the server itself keeps pages whole and foreign keys enforced: nothing to ask a file.
  if (onPostgres) return { integrity: ['ok'], foreign: [] }
  const file = rawDatabase().filename
  const db = new Database(file, { readonly: true })
  try {
    const integrity = db.query('PRAGMA integrity_check').all() as { integrity_check: string }[]
    const foreign = db.query('PRAGMA foreign_key_check').all()
    return { integrity: integrity.map((r) => r.integrity_check), foreign }
  } finally {
    db.close()
  }
}

process.on('message', async (message: { id: number; cmd: string }) => {
  let reply: unknown
  try {
    switch (message.cmd) {
      case 'fixtures':
        ctx ??= await fixtures()
        reply = ctx
        break
      case 'world':
        reply = await world()
        break
      case 'opcodes':
        // The client opcodes the domains registered with the Gateway (the fuzzer's oracle reads the same table).
        reply = [...wiring().opHandlers.keys()]
        break
      case 'health':
        reply = {
          prototypes: prototypeNames(),
          pristine,
          polluted: ['polluted', 'isAdmin', 'x', 'limit', '_errors'].filter((k) => k in ({} as object)),
          rss: process.memoryUsage().rss,
          database: databaseCheck(),
          maxBodyBytes: config().maxBodyBytes,
        }
        break
      default: {
        const soak = /^soakUsers:(\d+)$/.exec(message.cmd)
        if (!soak) {
          reply = { error: `unknown command ${message.cmd}` }
          break
        }
        // Users with a session token and a lobbies.write bearer of the game (for the soak test).
        const appLike = { id: ctx.game.id, client_secret: ctx.game.secret, bot_token: ctx.game.bot.slice(4) }
        reply = await Promise.all(
          Array.from({ length: Number(soak[1]) }, async () => {
            const user = await makeUser()
            return { id: user.id, token: user.token, bearer: await bearerFor(user, appLike) }
          }),
        )
      }
    }
  } catch (error) {
    reply = { error: String((error as Error)?.stack ?? error) }
  }
  process.send!({ id: message.id, reply })
})

process.send!({ ready: true })
