// Request bodies, read once for every route: JSON everywhere; form bodies only where the protocol says so (the
// OAuth2 token endpoints); multipart with `payload_json` on message routes, as Discord's. Anything else is 415.
// The body is read against MAX_BODY_BYTES as it streams (chunked bodies included) and within a deadline, so a slow
// or endless body cannot hold a connection. Client keys land in prototype-less objects.
import { config } from '../config'
import { addFieldError, Errors, errorTree } from '../core/errors'
import { requestTimeout, unsupportedMediaType } from './errors'

const FORM_ROUTES = [/\/oauth2\/token(\/revoke)?$/]
// Every JSON body is an object, but for these lists (as Discord's bulk endpoints).
const ARRAY_ROUTES = [
  /\/lobbies\/:lobbyId\/members\/bulk$/,
  /\/applications\/:applicationId(\/guilds\/:guildId)?\/commands$/,
  /\/guilds\/:guildId\/(roles|channels)$/,
]
const MULTIPART_ROUTES = [/\/channels\/:channelId\/messages$/, /\/lobbies\/:lobbyId\/messages$/]

/** The body as bytes, refused with 413 past the limit and 408 past the deadline. */
async function readLimited(request: Request): Promise<Uint8Array> {
  const max = config().maxBodyBytes
  let timer: Timer | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(requestTimeout()), config().bodyTimeoutMs)
  })
  // With a Content-Length within the limit (onRequest refused larger ones) Bun reads exactly that many bytes: one
  // native read, no stream of chunks to count (a tenth of a small POST's time went to the stream machinery).
  const length = request.headers.get('content-length')
  if (
    length !== null &&
    request.headers.get('transfer-encoding') === null &&
    /^\d+$/.test(length) &&
    Number(length) <= max
  ) {
    try {
      return new Uint8Array(await Promise.race([request.arrayBuffer(), deadline]))
    } finally {
      clearTimeout(timer)
    }
  }
  const reader = request.body!.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline])
      if (done) break
      size += value.byteLength
      if (size > max) throw Errors.entityTooLarge()
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  } finally {
    clearTimeout(timer)
  }
  return Buffer.concat(chunks)
}

// Fatal: invalid UTF-8 is refused, not replaced. Decoding a whole buffer keeps no state, so one decoder serves all.
const utf8 = new TextDecoder('utf-8', { fatal: true })

// Snowflakes may come as JSON numbers (discord.py sends message ids so): past 2^53 a number would be rounded, so an
// integer that long is read as the digits sent, a string as the routes' snowflakes are. Only bodies that hold a
// number of 16 digits or more pay for the reviver.
const LONG_NUMBER = /[[:,]\s*-?\d{16}/
function exactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? '')
    ? context!.source
    : value
}

function parseJson(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return null
  let text: string
  let value: unknown
  try {
    text = utf8.decode(bytes)
    value = LONG_NUMBER.test(text) ? JSON.parse(text, exactIntegers) : JSON.parse(text)
  } catch {
    throw Errors.invalidJson()
  }
  if (!/toString|valueOf|\\u/.test(text)) return value
  if (text.includes('\\u0000')) refuseNul(value)
  return defuse(value)
}

/**
 * A string holding a NUL character (U+0000, sent as the escape `\u0000`) is refused: PostgreSQL's text cannot store
 * one, and bad input is answered alike on both databases, 400 50035 naming every such field. Walked with a stack; a
 * node keeps its parent and key, so a deep body costs no copies of its path.
 */
type Visit = { node: unknown; key?: string; parent?: Visit }
function refuseNul(root: unknown): void {
  const errors = errorTree()
  let found = false
  const stack: Visit[] = [{ node: root }]
  while (stack.length) {
    const visit = stack.pop()!
    const { node } = visit
    if (typeof node === 'string' && node.includes('\0')) {
      const path: string[] = []
      for (let v: Visit | undefined = visit; v?.key !== undefined; v = v.parent) path.unshift(v.key)
      addFieldError(errors, path, { code: 'BASE_TYPE_INVALID', message: 'Null characters are not allowed.' })
      found = true
    } else if (typeof node === 'object' && node !== null)
      for (const [key, child] of Object.entries(node)) stack.push({ node: child, key, parent: visit })
  }
  if (found) throw Errors.invalidFormBody(errors)
}

function printable(this: object, hint: string): string | number {
  return hint === 'number' ? NaN : Array.isArray(this) ? '[object Array]' : '[object Object]'
}

/**
 * JSON can give an object its own "toString" or "valueOf" key, but never a function: such an object throws a
 * TypeError wherever it is turned into a string (a validation message's `${value}`, a log line), which would answer
 * 500. Each one gets a hidden Symbol.toPrimitive, so it prints like any other object; its keys and its JSON stay as
 * the client sent them. Walked with a stack: bodies may nest deeper than the call stack.
 */
function defuse(root: unknown): unknown {
  const stack = [root]
  while (stack.length) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null) continue
    if (Object.hasOwn(node, 'toString') || Object.hasOwn(node, 'valueOf')) {
      Object.defineProperty(node, Symbol.toPrimitive, { value: printable, enumerable: false })
    }
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push(child)
  }
  return root
}

/** Form fields; a repeated key becomes a list (the OAuth2 endpoints treat repeats as invalid). */
function parseForm(bytes: Uint8Array): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null)
  for (const [key, value] of new URLSearchParams(new TextDecoder().decode(bytes))) {
    const seen = out[key]
    out[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]
  }
  return out
}

/** Discord's multipart message form: the JSON is in `payload_json` (files are not stored by this server). */
async function parseMultipart(bytes: Uint8Array, contentType: string): Promise<unknown> {
  let form: Awaited<ReturnType<Response['formData']>>
  try {
    form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData()
  } catch {
    throw Errors.invalidFormBody({ _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid multipart body.' }] })
  }
  const payload = form.get('payload_json')
  if (typeof payload !== 'string') return null
  return parseJson(new TextEncoder().encode(payload))
}

/** A scalar (or a list where a dictionary is expected) is a form error; JSON null counts as an empty body. */
function shaped(value: unknown, route: string): unknown {
  if (
    value === null ||
    (typeof value === 'object' && (!Array.isArray(value) || ARRAY_ROUTES.some((r) => r.test(route))))
  )
    return value
  throw Errors.invalidFormBody({
    _errors: [{ code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }],
  })
}

/** Routes whose body is never read (the web pages' POST answer: a form posted without its script). */
const UNREAD = new Set<string>()

/** Leave these routes' bodies unread: no parse, no 415, nothing of it kept. */
export function leaveBodiesUnread(routes: Iterable<string>): void {
  for (const route of routes) UNREAD.add(route)
}

/**
 * Elysia's parse hook for every route that reads a body. Returns the parsed body, `null` for an empty one (each
 * route's schema decides whether that is acceptable; a consumed body cannot be handed back as `undefined`, which would
 * make Elysia parse it again), or throws a Discord error.
 */
export async function parseBody(request: Request, route: string, contentType: string): Promise<unknown> {
  if (!request.body) return undefined // no body at all: Elysia leaves `body` undefined
  // null, not undefined: undefined would let Elysia parse the body its own way.
  if (UNREAD.has(route)) return null
  const type = contentType.trim().toLowerCase()
  const bytes = await readLimited(request)
  if (bytes.byteLength === 0 && type === '') return null
  if (type === 'application/json') return shaped(parseJson(bytes), route)
  if (type === 'application/x-www-form-urlencoded' && FORM_ROUTES.some((r) => r.test(route))) return parseForm(bytes)
  if (type === 'multipart/form-data' && MULTIPART_ROUTES.some((r) => r.test(route))) {
    return shaped(await parseMultipart(bytes, request.headers.get('content-type') ?? type), route)
  }
  throw unsupportedMediaType(type)
}
