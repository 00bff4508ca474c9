import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { httpBasics } from '../../src/http/basics'
import { bodyCheck } from '../../src/http/validation'

// A tiny app with the production error handling and a few schemas, over real HTTP.
let server: { stop: () => void; url: string }

// Two copies of one schema: Elysia changes the one given to a route.
const thing = () =>
  t.Object({
    name: t.String({ minLength: 2, maxLength: 5 }),
    count: t.Optional(t.Integer({ minimum: 1, maximum: 10 })),
    members: t.Optional(t.Array(t.Object({ id: t.String() }), { maxItems: 2 })),
    flag: t.Optional(t.Boolean()),
    nonce: t.Optional(t.Union([t.String({ maxLength: 3 }), t.Integer()])),
    deep: t.Optional(t.Object({ list: t.Array(t.Object({ tags: t.Array(t.String()) })) })),
  })
const checkThing = bodyCheck(thing())

beforeAll(() => {
  const app = new Elysia()
    .use(httpBasics)
    .post('/thing', ({ body }) => body, { body: thing() })
    // The same schema judged by bodyCheck, as a lane route's body is (http/lane.ts).
    .post('/checked', ({ body }) => checkThing(body))
    .get('/boom', () => {
      throw new Error('secret internal detail')
    })
    .listen({ port: 0, hostname: '127.0.0.1' })
  server = { stop: () => app.stop(), url: `http://127.0.0.1:${app.server!.port}` }
})
afterAll(() => server.stop())

async function post(body: string, path = '/thing') {
  const r = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  return { status: r.status, body: (await r.json()) as any, type: r.headers.get('content-type') }
}

test('a missing field gives 400 50035 BASE_TYPE_REQUIRED under errors.<field>._errors', async () => {
  const r = await post('{}')
  expect(r.status).toBe(400)
  expect(r.type).toContain('application/json')
  expect(r.body).toEqual({
    code: 50035,
    message: 'Invalid Form Body',
    errors: { name: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
  })
})

test('length and range limits name the bounds', async () => {
  const long = await post(JSON.stringify({ name: 'abcdef' }))
  expect(long.body.errors.name._errors[0]).toEqual({
    code: 'BASE_TYPE_BAD_LENGTH',
    message: 'Must be between 2 and 5 in length.',
  })
  const edge = await post(JSON.stringify({ name: 'abcde', count: 10 }))
  expect(edge.status).toBe(200)
  const over = await post(JSON.stringify({ name: 'ab', count: 11 }))
  expect(over.body.errors.count._errors[0].code).toBe('NUMBER_TYPE_MAX')
})

test('nested array errors use string indices as keys', async () => {
  const r = await post(JSON.stringify({ name: 'ab', members: [{ id: 'x' }, { id: 5 }] }))
  expect(r.status).toBe(400)
  expect(r.body.errors.members['1'].id._errors[0].code).toBe('BASE_TYPE_STRING')
  const tooMany = await post(JSON.stringify({ name: 'ab', members: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }))
  expect(tooMany.body.errors.members._errors[0]).toEqual({
    code: 'BASE_TYPE_MAX_LENGTH',
    message: 'Must be 2 or fewer in length.',
  })
})

test('invalid JSON gives 400 50109', async () => {
  const r = await post('{"name": "ab",')
  expect(r.status).toBe(400)
  expect(r.body).toEqual({ code: 50109, message: 'The request body contains invalid JSON.' })
})

test('an unexpected exception gives 500 without internals', async () => {
  const r = await fetch(`${server.url}/boom`)
  expect(r.status).toBe(500)
  const text = await r.text()
  expect(text).not.toContain('secret internal detail')
  expect(JSON.parse(text)).toEqual({ message: '500: Internal Server Error', code: 0 })
})

test("bodyCheck judges a body as the route's Elysia schema does: errors, extra fields, transforms", async () => {
  const bodies = [
    '{"name":"abc"}',
    '{"name":"abc","extra":{"x":1}}',
    '{}',
    'null',
    '{"name":"a","count":11,"members":[{"id":1},{"id":"x"},{}],"flag":"no"}',
    '{"name":"abc","count":"7"}',
    '{"name":"abc","nonce":"ab"}',
    '{"name":"abc","nonce":"12345"}',
    '{"name":"abc","nonce":"abcd"}',
    '{"name":"abc","nonce":4.5}',
  ]
  for (const body of bodies) {
    const elysia = await post(body)
    const checked = await post(body, '/checked')
    // Fields the schema does not name: Elysia drops them, bodyCheck lets them by (handlers read named fields only).
    if (checked.status === 200) delete checked.body.extra
    expect({ body, status: checked.status, answer: checked.body }).toEqual({
      body,
      status: elysia.status,
      answer: elysia.body,
    })
  }
  // A numeric string too long for the string branch is Elysia's t.Integer: decoded to a number, on both.
  expect((await post('{"name":"abc","nonce":"12345"}', '/checked')).body.nonce).toBe(12345)
})

/** Every path of a Discord error tree with its codes. */
function paths(tree: any, prefix = ''): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const [key, value] of Object.entries(tree ?? {})) {
    if (key === '_errors') out[prefix || '(body)'] = (value as { code: string }[]).map((e) => e.code)
    else Object.assign(out, paths(value, prefix ? `${prefix}.${key}` : key))
  }
  return out
}

test('a wrong type at any depth is one error at its path (Elysia route and bodyCheck alike), never one per item', async () => {
  const cases: [body: unknown, errors: Record<string, string[]>][] = [
    [{ name: 123 }, { name: ['BASE_TYPE_STRING'] }],
    [{ name: ['a', 'b', 'c'] }, { name: ['BASE_TYPE_STRING'] }],
    [{ name: 'ab', flag: { a: 1 } }, { flag: ['BOOLEAN_TYPE_CONVERT'] }],
    [{ name: 'ab', members: 'not-an-array' }, { members: ['LIST_TYPE_CONVERT'] }],
    [{ name: 'ab', members: { 0: { id: 'x' } } }, { members: ['LIST_TYPE_CONVERT'] }],
    [{ name: 'ab', members: ['abcdef'] }, { 'members.0': ['DICT_TYPE_CONVERT'] }],
    [{ name: 'ab', members: [{ id: ['x', 'y'] }] }, { 'members.0.id': ['BASE_TYPE_STRING'] }],
    [{ name: 'ab', deep: 'string' }, { deep: ['DICT_TYPE_CONVERT'] }],
    [{ name: 'ab', deep: { list: 'string' } }, { 'deep.list': ['LIST_TYPE_CONVERT'] }],
    [{ name: 'ab', deep: { list: ['xyz'] } }, { 'deep.list.0': ['DICT_TYPE_CONVERT'] }],
    [{ name: 'ab', deep: { list: [{ tags: 'abc' }] } }, { 'deep.list.0.tags': ['LIST_TYPE_CONVERT'] }],
    [
      { name: 'ab', deep: { list: [{ tags: ['ok', 5, { x: 'y' }] }] } },
      { 'deep.list.0.tags.1': ['BASE_TYPE_STRING'], 'deep.list.0.tags.2': ['BASE_TYPE_STRING'] },
    ],
    [
      { name: 7, members: 'xy', deep: { list: [{ tags: 'zz' }] } },
      { name: ['BASE_TYPE_STRING'], members: ['LIST_TYPE_CONVERT'], 'deep.list.0.tags': ['LIST_TYPE_CONVERT'] },
    ],
  ]
  for (const [body, errors] of cases)
    for (const path of ['/thing', '/checked']) {
      const r = await post(JSON.stringify(body), path)
      expect({ path, body, status: r.status, code: r.body.code, errors: paths(r.body.errors) }).toEqual({
        path,
        body,
        status: 400,
        code: 50035,
        errors,
      })
    }
})
