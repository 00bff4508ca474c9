// REST of Discord's username rules: a suggestion from a display name, and whether a username is taken. Both are open
// to anonymous callers (the registration form asks them).
import { endpoint } from '../http/endpoint'
import { isUsernameTaken, suggestUsername, usernameProblem } from './rules'
import { AttemptAnswer, AttemptSchema, SuggestionAnswer, SuggestionQuery } from './schemas'

/** The usernames domain's endpoints (http/endpoint.ts). */
export const usernameEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/unique-username/username-suggestions-unauthed',
      auth: null,
      tag: 'usernames',
      summary: 'Suggest a free username',
      query: SuggestionQuery,
      answers: { 200: SuggestionAnswer },
    },
    async ({ query }) => ({ username: await suggestUsername(query().global_name) }),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/unique-username/username-attempt-unauthed',
      auth: null,
      tag: 'usernames',
      summary: 'Is a username taken? null when it is invalid',
      body: AttemptSchema,
      answers: { 200: AttemptAnswer },
    },
    async ({ body }) => ({ taken: usernameProblem(body.username) ? null : await isUsernameTaken(body.username) }),
  ),
]
