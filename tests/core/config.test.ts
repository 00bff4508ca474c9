import { expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'

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
  ['SMTP_URL', 'http://mail'],
  ['SESSION_IDLE_DAYS', '0'],
])('%s=%s is refused with a message naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
  expect(() => loadConfig({ [name]: value })).toThrow(name)
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
