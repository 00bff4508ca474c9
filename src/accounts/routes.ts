import { Elysia } from 'elysia'
import { Errors } from '../core/errors'
import { identity } from '../http/identity'
import { userForCaller } from './serialize'
import { findUser } from './store'
import { mfaEnabled } from '../mfa/factors'

export const usersRoutes = new Elysia().use(identity).get(
  '/users/@me',
  async ({ caller }) => {
    const user = await findUser(caller.userId)
    if (!user) throw Errors.unauthorized()
    return userForCaller(user, caller, mfaEnabled(user.id))
  },
  { auth: { kinds: ['user', 'bot', 'bearer'], scope: 'identify' }, detail: { tags: ['users'], summary: 'The calling user' } },
)
