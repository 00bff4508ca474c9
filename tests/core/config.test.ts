import { expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { freePort, freshEnv, serve } from '../ops/process-helpers'

test('defaults are sane', () => {
  const c = loadConfig({})
  expect(c.port).toBe(8080)
  expect(c.databasePath).toBe('./data/app.sqlite')
  expect(c.baseUrl).toBe('http://localhost:8080')
})

test.each([
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['TRUST_PROXY', 'maybe'],
  ['LOG_LEVEL', 'loud'],
  ['BASE_URL', 'not a url'],
  ['PUBLIC_URL', 'ftp://lb.example'],
  ['SMTP_URL', 'http://mail'],
  ['SESSION_IDLE_DAYS', '0'],
])('%s=%s is refused with a message naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
  expect(() => loadConfig({ [name]: value })).toThrow(name)
})

test('PUBLIC_URL is the public address, another name for BASE_URL (the same address twice is fine, two are refused)', () => {
  expect(loadConfig({ PUBLIC_URL: 'https://chat.example.com/' }).baseUrl).toBe('https://chat.example.com')
  expect(loadConfig({ PUBLIC_URL: 'https://chat.example.com/' }).webUrl).toBe('https://chat.example.com')
  const both = { PUBLIC_URL: 'https://chat.example.com', BASE_URL: 'https://chat.example.com/' }
  expect(loadConfig(both).baseUrl).toBe('https://chat.example.com')
  const differ = { PUBLIC_URL: 'https://lb.example.com', BASE_URL: 'http://localhost:8081' }
  expect(() => loadConfig(differ)).toThrow(ConfigError)
  expect(() => loadConfig(differ)).toThrow('PUBLIC_URL')
})

test('the server stops at start with one clear line for a bad value', () => {
  const proc = Bun.spawnSync([process.execPath, 'run', 'src/main.ts'], {
    env: { ...process.env, PORT: 'eighty' },
    stderr: 'pipe',
    stdout: 'pipe',
  })
  expect(proc.exitCode).toBe(1)
  const lines = proc.stderr.toString().trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('PORT')
})

test('a server given PUBLIC_URL (a load balancer) sends clients there (GET /gateway; READY resume_gateway_url is the same address)', async () => {
  const port = freePort()
  const server = await serve(freshEnv({ PORT: String(port), PUBLIC_URL: 'https://lb.example.com:9443' }).env)
  try {
    expect(server.url).toBe('https://lb.example.com:9443')
    const answer = await fetch(`http://127.0.0.1:${port}/api/v10/gateway`)
    expect(await answer.json()).toEqual({ url: 'wss://lb.example.com:9443/gateway' })
  } finally {
    await server.stop()
  }
})
