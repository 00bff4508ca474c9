// Creating verified users (operators' CLI, tests); registration over HTTP is auth/register.ts.
import { clock } from '../core/clock'
import { snowflake } from '../core/snowflake'
import { hashPassword } from './passwords'
import { findUserByEmail, findUserByUsername, insertUser } from './store'
import type { UserRow } from './tables'

export class UserExistsError extends Error {}

export async function createVerifiedUser(input: {
  email: string
  password: string
  username?: string
}): Promise<UserRow> {
  const email = input.email.trim().toLowerCase()
  if (await findUserByEmail(email)) throw new UserExistsError(`a user with e-mail ${email} exists`)
  const username =
    (input.username ?? email.split('@')[0])
      .toLowerCase()
      .replace(/[^a-z0-9_.]/g, '')
      .slice(0, 32) || 'user'
  if (await findUserByUsername(username)) throw new UserExistsError(`username ${username} is taken`)
  return await insertUser({
    id: snowflake(),
    username,
    email,
    emailVerified: true,
    passwordHash: await hashPassword(input.password),
    createdAt: clock.now(),
  })
}
