// A real Discord client library (@discordjs/ws) against our Gateway: READY, then its own resume after op 7.
import { afterEach, expect, test } from 'bun:test'
import { REST } from '@discordjs/rest'
import { WebSocketManager, WebSocketShardEvents } from '@discordjs/ws'
import { events, topics } from '../../src/gateway/bus'
import { requestReconnect } from '../../src/gateway/dispatch'
import { makeApp, resetWorld, server } from '../helpers'

let manager: WebSocketManager | undefined
afterEach(async () => {
  await manager?.destroy()
  manager = undefined
  resetWorld()
})

function once<T = unknown>(event: string, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs)
    manager!.once(event as never, ((...args: unknown[]) => (clearTimeout(timer), resolve(args[0] as T))) as never)
  })
}

test('@discordjs/ws connects with a bot token, gets READY, and resumes after its own reconnect', async () => {
  const { url } = await server()
  const app = await makeApp()
  const rest = new REST({ api: `${url}/api`, version: '10', retries: 0 }).setToken(app.bot_token)
  manager = new WebSocketManager({ token: app.bot_token, intents: 0, rest, version: '10' })
  const dispatched: { t: string; d: any }[] = []
  manager.on(WebSocketShardEvents.Dispatch, (payload: any) => dispatched.push({ t: payload.t, d: payload.d }))

  const ready = once(WebSocketShardEvents.Ready)
  await manager.connect()
  const readyData: any = await ready
  expect(readyData.data?.user?.bot ?? dispatched.find((e) => e.t === 'READY')?.d.user.bot).toBe(true)

  // Op 7 makes the library close and resume; an event published while it is away is replayed.
  const resumed = once(WebSocketShardEvents.Resumed)
  const botUserId = dispatched.find((e) => e.t === 'READY')!.d.user.id
  requestReconnect(botUserId)
  events.publish(topics.app(app.id), 'WHILE_AWAY', { n: 1 })
  await resumed
  events.publish(topics.app(app.id), 'AFTER_RESUME', { n: 2 })
  const deadline = Date.now() + 3000
  while (!dispatched.some((e) => e.t === 'AFTER_RESUME') && Date.now() < deadline) await Bun.sleep(20)
  expect(dispatched.filter((e) => e.t === 'WHILE_AWAY')).toHaveLength(1)
  expect(dispatched.some((e) => e.t === 'AFTER_RESUME')).toBe(true)
  expect(dispatched.filter((e) => e.t === 'READY')).toHaveLength(1) // resumed, not re-identified
})
