import { Elysia, t } from 'elysia'
import { isUsernameTaken, suggestUsername, usernameProblem } from './rules'

export const usernameRoutes = new Elysia()
  .get('/unique-username/username-suggestions-unauthed', async ({ query }) => ({ username: await suggestUsername(query.global_name) }), {
    query: t.Object({ global_name: t.Optional(t.String({ maxLength: 32 })) }),
    detail: { tags: ['usernames'], summary: 'Suggest a free username' },
  })
  .post(
    '/unique-username/username-attempt-unauthed',
    async ({ body }) => ({ taken: usernameProblem(body.username) ? null : await isUsernameTaken(body.username) }),
    { body: t.Object({ username: t.String({ maxLength: 64 }) }), detail: { tags: ['usernames'], summary: 'Is a username taken? null when it is invalid' } },
  )
