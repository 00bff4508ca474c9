// REST of the accounts domain: the calling user and its login settings.
import type { Caller } from '../core/caller'
import { Errors } from '../core/errors'
import { endpoint } from '../http/endpoint'
import { JsonText } from '../http/respond'
import { LoginSettings, PrivateUser, PublicUser, SettingsPatchSchema } from './schemas'
import { secondFactor } from './second-factor'
import { privateUser, publicUser, userForCaller } from './serialize'
import { changeSettings, loginSettings } from './settings'
import { cachedUserText, cachedUser } from './store'

/** The calling user: the user row and its second factors, both cached, each one read when it is not. */
async function me(caller: Caller) {
  const user = await cachedUser(caller.userId)
  if (!user) throw Errors.unauthorized()
  const { enabled, authenticatorTypes: types } = await secondFactor().state(user.id)
  if (caller.kind === 'bearer') return userForCaller(user, caller, enabled)
  // User sessions and bots see the whole private user, with its authenticator types: its text is kept with the row.
  return new JsonText(cachedUserText(user.id, types.join(','), () => JSON.stringify(privateUser(user, enabled, types))))
}

/** The accounts domain's endpoints (http/endpoint.ts). */
export const accountEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/users/@me',
      auth: { kinds: ['user', 'bot', 'bearer'], scope: 'identify' },
      tag: 'users',
      summary: 'The calling user',
      answers: { 200: PrivateUser },
      hot: true,
    },
    ({ caller }) => me(caller),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/settings',
      auth: 'user',
      tag: 'auth',
      summary: 'Login settings (locale, theme)',
      answers: { 200: LoginSettings },
    },
    async ({ caller }) => loginSettings((await cachedUser(caller.userId))!),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/users/@me/settings',
      auth: 'user',
      tag: 'auth',
      summary: 'Change locale or theme',
      body: SettingsPatchSchema,
      answers: { 200: LoginSettings },
    },
    async ({ caller, body }) => {
      const patch = {
        ...(body.locale !== undefined ? { locale: body.locale } : {}),
        ...(body.theme !== undefined ? { theme: body.theme } : {}),
      }
      return await changeSettings(caller.userId, patch)
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/users/:userId',
      auth: ['user', 'bot'],
      tag: 'users',
      summary: 'A user (its public fields)',
      answers: { 200: PublicUser },
    },
    async ({ caller, params }) => {
      // `/users/%40me` reaches this route (the router matches the static `@me` only as sent).
      if (params.userId === '@me') return me(caller)
      const user = await cachedUser(params.userId)
      if (!user) throw Errors.unknownUser()
      return publicUser(user)
    },
  ),
]
