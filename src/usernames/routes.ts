// REST of Discord's username rules: a suggestion from a display name, and whether a username is taken.
import { Elysia } from 'elysia'
import { doc } from '../http/docs'
import { isUsernameTaken, suggestUsername, usernameProblem } from './rules'
import { AttemptAnswer, AttemptSchema, SuggestionAnswer, SuggestionQuery } from './schemas'

export const usernameRoutes = new Elysia()
  .get(
    '/unique-username/username-suggestions-unauthed',
    async ({ query }) => ({ username: await suggestUsername(query.global_name) }),
    {
      query: SuggestionQuery,
      ...doc('usernames', 'Suggest a free username', { 200: SuggestionAnswer }),
    },
  )
  .post(
    '/unique-username/username-attempt-unauthed',
    async ({ body }) => ({ taken: usernameProblem(body.username) ? null : await isUsernameTaken(body.username) }),
    {
      body: AttemptSchema,
      ...doc('usernames', 'Is a username taken? null when it is invalid', { 200: AttemptAnswer }),
    },
  )
