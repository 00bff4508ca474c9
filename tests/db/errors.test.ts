// db/errors.ts and core/log.ts on the running database (SQLite, or PostgreSQL in its pass; on SQLite the driver's
// error carries no parameters, so the log test can fail only on PostgreSQL): a unique index's refusal names its
// table.column, and a failed query's log text keeps the query and the database's answer but none of its parameters.
import { expect, test } from 'bun:test'
import { insertUser } from '../../src/accounts/store'
import { snowflake } from '../../src/core/snowflake'
import { loggableError, uniqueViolation } from '../../src/db/errors'
import { server } from '../helpers'

test('a duplicate e-mail: users.email, and the log text holds no parameter of the query', async () => {
  await server()
  const email = `dup${snowflake()}@example.test`
  const secret = `$argon2id$never-logged-${snowflake()}`
  await insertUser({ id: snowflake(), username: `a${snowflake()}`, email, passwordHash: secret, createdAt: 1 })
  const error = await insertUser({
    id: snowflake(),
    username: `b${snowflake()}`,
    email,
    passwordHash: secret,
    createdAt: 1,
  }).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeDefined()
  expect(uniqueViolation(error)).toBe('users.email')
  const text = loggableError(error)
  expect(text).toContain('users')
  expect(text).not.toContain(secret)
  expect(text).not.toContain(email)
  expect(uniqueViolation(new Error('something else'))).toBeUndefined()
})

test('any log line with a failed query in a field keeps no parameter of it (String(error) included)', async () => {
  await server()
  const { captureLog, log, setLogOptions } = await import('../../src/core/log')
  const { config } = await import('../../src/config')
  const email = `dup${snowflake()}@example.test`
  const row = () => ({ id: snowflake(), username: `c${snowflake()}`, email, createdAt: 1 })
  await insertUser(row())
  const error = await insertUser(row()).then(
    () => undefined,
    (e: unknown) => e,
  )
  const lines: string[] = []
  captureLog((line) => void lines.push(line))
  setLogOptions('error', 'text')
  try {
    log.error('work after a commit failed', { error: String(error) })
    log.error('unhandled error', { error: String((error as Error).stack) })
  } finally {
    captureLog(undefined)
    setLogOptions(config().logLevel, config().logFormat)
  }
  expect(lines).toHaveLength(2)
  for (const line of lines) expect(line).not.toContain(email)
})
