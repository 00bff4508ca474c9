// The static field rules of registration and login (auth/schemas.ts) at their edges: the limit passes, one past it is
// 400 50035 with Discord's code and message at the field; with the database's own refusals reported by the handler.
import { afterEach, expect, test } from 'bun:test'
import { api, resetWorld } from '../helpers'
import { registerUser, uniqueEmail } from './helpers'

afterEach(resetWorld)

const at = (code: string, message: string) => ({ _errors: [{ code, message }] })
const between = (low: number, high: number) =>
  at('BASE_TYPE_BAD_LENGTH', `Must be between ${low} and ${high} in length.`)

/** A date `years` years before today (UTC), moved by `days`. */
function yearsAgo(years: number, days = 0): string {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear() - years, now.getUTCMonth(), now.getUTCDate() + days))
    .toISOString()
    .slice(0, 10)
}

test('registration: username, global_name, e-mail, password and date of birth at their edges', async () => {
  // An address of exactly 254 characters.
  const email254 = `${'e'.repeat(254 - '@example.test'.length)}@example.test`
  const cases: [what: string, passes: Record<string, unknown>, fails: Record<string, unknown>, errors: object][] = [
    [
      'username 32',
      { username: `u${'x'.repeat(31)}` },
      { username: `u${'x'.repeat(32)}` },
      { username: between(2, 32) },
    ],
    ['username 2', { username: 'ux' }, { username: 'u' }, { username: between(2, 32) }],
    [
      'global_name 32',
      { global_name: 'g'.repeat(32) },
      { global_name: 'g'.repeat(33) },
      { global_name: between(1, 32) },
    ],
    ['global_name 1', { global_name: 'g' }, { global_name: '' }, { global_name: between(1, 32) }],
    [
      'email 254',
      { email: email254 },
      { email: `e${email254}` },
      { email: at('BASE_TYPE_MAX_LENGTH', 'Must be 254 or fewer in length.') },
    ],
    ['password 8', { password: 'Zq8#mW2!' }, { password: 'Zq8#mW2' }, { password: between(8, 72) }],
    [
      'password 72',
      { password: 'Zq8#mW2!'.repeat(9) },
      { password: `${'Zq8#mW2!'.repeat(9)}x` },
      { password: between(8, 72) },
    ],
    [
      'date_of_birth 13 years',
      { date_of_birth: yearsAgo(13) },
      { date_of_birth: yearsAgo(13, 1) },
      { date_of_birth: at('DATE_OF_BIRTH_IS_UNDERAGE', 'You need to be 13 or older to use this service.') },
    ],
    [
      'date_of_birth today at the latest',
      { date_of_birth: yearsAgo(100) },
      { date_of_birth: yearsAgo(0, 1) },
      { date_of_birth: at('DATE_OF_BIRTH_INVALID', 'Not a valid date of birth.') },
    ],
  ]
  for (const [what, passes, fails, errors] of cases) {
    const good = await registerUser(passes)
    expect({ what, status: good.r.status }).toEqual({ what, status: 200 })
    const bad = await registerUser(fails)
    expect({ what, status: bad.r.status, body: bad.r.body }).toEqual({
      what,
      status: 400,
      body: { code: 50035, message: 'Invalid Form Body', errors },
    })
  }
})

test("registration: the handler's refusals (taken, required together) are reported together", async () => {
  const first = await registerUser()
  const r = await api('POST', '/auth/register', {
    body: { username: first.username, email: first.email.toUpperCase(), consent: true },
  })
  expect(r.body).toEqual({
    code: 50035,
    message: 'Invalid Form Body',
    errors: {
      username: at(
        'USERNAME_ALREADY_TAKEN',
        'Username is unavailable. Try adding numbers, letters, underscores _ , or periods.',
      ),
      email: at('EMAIL_ALREADY_REGISTERED', 'Email is already registered.'),
      password: at('BASE_TYPE_REQUIRED', 'This field is required'),
    },
  })
  // An empty username with a global name is no username: one is made from the name.
  const made = await registerUser({ username: '', global_name: 'Made Up', email: uniqueEmail() })
  expect(made.r.status).toBe(200)
  expect((await api('GET', '/users/@me', { token: made.r.body.token })).body.username).toMatch(/^[a-z0-9_.]{2,32}$/)
})

test('login: login up to 320 characters and not blank, password 8-72, before the credentials are looked at', async () => {
  const login = (body: object) => api('POST', '/auth/login', { body })
  const invalid = { login: at('INVALID_LOGIN', 'Login or password is invalid.') }
  const cases: [passes: object, fails: object, errors: object][] = [
    [
      { login: `${'l'.repeat(320 - '@example.test'.length)}@example.test`, password: 'whatever-password' },
      { login: `${'l'.repeat(321 - '@example.test'.length)}@example.test`, password: 'whatever-password' },
      { login: at('BASE_TYPE_MAX_LENGTH', 'Must be 320 or fewer in length.') },
    ],
    [
      { login: 'x@example.test', password: 'p'.repeat(8) },
      { login: 'x@example.test', password: 'p'.repeat(7) },
      { password: between(8, 72) },
    ],
    [
      { login: 'x@example.test', password: 'p'.repeat(72) },
      { login: 'x@example.test', password: 'p'.repeat(73) },
      { password: between(8, 72) },
    ],
    [
      { login: 'x', password: 'p'.repeat(8) },
      { login: '   ', password: 'p'.repeat(8) },
      { login: at('BASE_TYPE_REQUIRED', 'This field is required') },
    ],
  ]
  for (const [passes, fails, errors] of cases) {
    // Past the form: an unknown account, refused on its credentials.
    expect((await login(passes)).body).toMatchObject({ code: 50035, errors: invalid })
    expect((await login(fails)).body).toEqual({ code: 50035, message: 'Invalid Form Body', errors })
  }
})
