import { Elysia } from 'elysia'
import { Errors } from '../core/errors'
import { identity } from '../http/identity'
import { userForCaller } from './serialize'
import { findUser } from './store'
import { secondFactor } from './second-factor'

export const usersRoutes = new Elysia().use(identity).get(
  '/users/@me',
  async ({ caller }) => {
    const user = findUser(caller.userId)
    if (!user) throw Errors.unauthorized()
    return userForCaller(user, caller, secondFactor().enabled(user.id))
  },
  { auth: { kinds: ['user', 'bot', 'bearer'], scope: 'identify' }, detail: { tags: ['users'], summary: 'The calling user' } },
)
