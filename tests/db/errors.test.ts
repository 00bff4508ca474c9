// db/errors.ts on the running database (SQLite, or PostgreSQL in its pass): a unique index's refusal names its
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
