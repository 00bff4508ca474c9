// The field types of http/validation.ts (Dict, NullableInt, NullableString, Snowflake, Refine) judged the same by an
// Elysia route and by bodyCheck (the lane's check), with Discord's codes and messages at the fields' paths, every
// field error of a body at once, and the value the handler gets as sent.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { httpBasics } from '../../src/http/basics'
import { bodyCheck, Dict, NullableInt, NullableString, Refine, Snowflake } from '../../src/http/validation'

const Even = Refine('TestEven', NullableInt(0, 100), (n) =>
  n % 2 === 0 ? undefined : { code: 'NUMBER_TYPE_EVEN', message: 'Must be even.' },
)
const schema = t.Object({
  map: t.Optional(Dict({ maxKeys: 3, maxChars: 3, maxKeyChars: 9 })),
  count: t.Optional(NullableInt(1, 10)),
  name: t.Optional(NullableString(5)),
  id: t.Optional(t.Nullable(Snowflake())),
  even: t.Optional(Even),
  items: t.Optional(t.Array(t.Object({ map: Dict({ maxKeys: 1, maxChars: 2 }) }))),
  choice: t.Optional(t.Nullable(t.Union([t.Literal('a'), t.Literal('b')]))),
})
const check = bodyCheck(schema)

let url = ''
let stop = () => {}
beforeAll(() => {
  // What the handler got: the map's own keys, and whether its prototype is still Object's.
  const seen = (body: { map?: Record<string, string> | null }) => ({
    body,
    keys: body.map ? Object.keys(body.map) : null,
    plain: body.map ? Object.getPrototypeOf(body.map) === Object.prototype : null,
  })
  const app = new Elysia()
    .use(httpBasics)
    .post('/elysia', ({ body }) => seen(body), { body: schema })
    .post('/checked', ({ body }) => seen(check(body)))
    .listen({ port: 0, hostname: '127.0.0.1' })
  url = `http://127.0.0.1:${app.server!.port}`
  stop = () => app.stop()
})
afterAll(() => stop())

async function both(body: string) {
  const answers: { status: number; body: any }[] = []
  for (const path of ['/elysia', '/checked']) {
    const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    answers.push({ status: r.status, body: await r.json() })
  }
  expect(answers[1]).toEqual(answers[0])
  return answers[0]
}

const at = (code: string, message: string) => ({ _errors: [{ code, message }] })

test('values at their limits pass as sent, "__proto__" a key like any other', async () => {
  const ok = await both(
    '{"map":{"__proto__":"abc","kkkk":"v"},"count":10,"name":"abcde","id":"9223372036854775807","even":100,"items":[{"map":null}],"choice":"b"}',
  )
  expect(ok.status).toBe(200)
  expect(ok.body.keys).toEqual(['__proto__', 'kkkk'])
  expect(ok.body.plain).toBe(true)
  for (const body of ['{}', '{"map":null,"count":null,"name":null,"id":null,"even":null,"choice":null}'])
    expect((await both(body)).status).toBe(200)
})

test('one past each limit, or a wrong type: every field error at once, at its path', async () => {
  const r = await both(
    JSON.stringify({
      map: { a: 'long', kkkkkkkkkk: 'v', b: 5 },
      count: 11,
      name: 'abcdef',
      id: '9223372036854775808',
      even: 3,
      items: [{ map: { a: 'b', c: 'd' } }, { map: 'x' }, {}],
      choice: 'c',
    }),
  )
  expect(r).toEqual({
    status: 400,
    body: {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        map: {
          a: at('BASE_TYPE_MAX_LENGTH', 'Must be 3 or fewer in length.'),
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Keys must be 9 or fewer in length.' }],
          b: at('BASE_TYPE_STRING', 'Could not interpret value as string.'),
        },
        count: at('NUMBER_TYPE_MAX', 'int value should be less than or equal to 10.'),
        name: at('BASE_TYPE_MAX_LENGTH', 'Must be 5 or fewer in length.'),
        id: at('NUMBER_TYPE_COERCE', 'Value "9223372036854775808" is not snowflake.'),
        even: at('NUMBER_TYPE_EVEN', 'Must be even.'),
        items: {
          0: { map: at('BASE_TYPE_MAX_LENGTH', 'Must be 1 or fewer in length.') },
          1: { map: at('DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType') },
          2: { map: at('BASE_TYPE_REQUIRED', 'This field is required') },
        },
        choice: at('BASE_TYPE_CHOICES', 'Value must be one of ["a","b"].'),
      },
    },
  })
})

test('wrong types: a nullable field is judged as its other type; a refined one by its schema first', async () => {
  const r = await both('{"map":["a"],"count":"3","name":7,"id":5,"even":1.5,"choice":1}')
  expect(r.body.errors).toEqual({
    map: at('DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType'),
    count: at('NUMBER_TYPE_COERCE', 'Value "3" is not int.'),
    name: at('BASE_TYPE_STRING', 'Could not interpret value as string.'),
    id: at('NUMBER_TYPE_COERCE', 'Value "5" is not snowflake.'),
    even: at('NUMBER_TYPE_COERCE', 'Value "1.5" is not int.'),
    choice: at('BASE_TYPE_CHOICES', 'Value must be one of ["a","b"].'),
  })
  expect((await both('{"count":0,"map":{"a":"1","b":"2","c":"3","d":"4"}}')).body.errors).toEqual({
    count: at('NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.'),
    map: at('BASE_TYPE_MAX_LENGTH', 'Must be 3 or fewer in length.'),
  })
})

test('a rule has one name', () => {
  expect(() => Refine('TestEven', t.Integer(), () => undefined)).toThrow('exists already')
})
