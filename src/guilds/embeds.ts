// A message's embeds as sent, judged as Discord does: null fields are unset, then EmbedsSchema (10 embeds, 25
// fields, each text's limit), then what a schema cannot say, as Discord's form errors: URLs that parse (http, https,
// or attachment://), timestamps in ISO 8601, and at most 6000 characters of text across a message's embeds (titles,
// descriptions, field names and values, footer texts, author names). The stored embed is what Discord answers: type "rich",
// fields with `inline`, unset values left out (undefined: the JSON column drops them).
import { t } from 'elysia'
import { FormCheck } from '../http/form'
import { bodyCheck } from '../http/validation'
import { EmbedsSchema, type EmbedInput } from './schemas'
import type { Embed } from './tables'

const MAX_TEXT = 6000
const embedsCheck = bodyCheck(t.Object({ embeds: EmbedsSchema }))
const SCHEMES = new Set(['http:', 'https:', 'attachment:'])

function url(check: FormCheck, path: (string | number)[], value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  if (!URL.canParse(value) || !SCHEMES.has(new URL(value).protocol))
    check.add(path, 'URL_TYPE_INVALID_URL', 'Not a well formed URL.')
  return value
}

function timestamp(check: FormCheck, path: (string | number)[], value: string | undefined) {
  if (value === undefined) return undefined
  const ms = /^\d{4}-\d{2}-\d{2}([T ]|$)/.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) {
    check.add(path, 'DATE_TIME_TYPE_PARSE', `Could not parse ${value.slice(0, 64)}. Should be ISO8601.`)
    return undefined
  }
  return new Date(ms).toISOString()
}

function embed(check: FormCheck, i: number, e: EmbedInput): Embed {
  const at = (...path: (string | number)[]) => ['embeds', i, ...path]
  return {
    type: 'rich' as const,
    title: e.title,
    description: e.description,
    url: url(check, at('url'), e.url),
    timestamp: timestamp(check, at('timestamp'), e.timestamp),
    color: e.color,
    footer: e.footer
      ? { text: e.footer.text, icon_url: url(check, at('footer', 'icon_url'), e.footer.icon_url) }
      : undefined,
    image: e.image ? { url: url(check, at('image', 'url'), e.image.url)! } : undefined,
    thumbnail: e.thumbnail ? { url: url(check, at('thumbnail', 'url'), e.thumbnail.url)! } : undefined,
    author: e.author
      ? {
          name: e.author.name,
          url: url(check, at('author', 'url'), e.author.url),
          icon_url: url(check, at('author', 'icon_url'), e.author.icon_url),
        }
      : undefined,
    fields: e.fields?.map((f, n) => {
      for (const key of ['name', 'value'] as const)
        if (!f[key]) check.add(at('fields', n, key), 'BASE_TYPE_REQUIRED', 'This field is required')
      return { name: f.name, value: f.value, inline: f.inline ?? false }
    }),
  }
}

/** The characters Discord counts towards the 6000 of a message. */
function textLength(e: Embed): number {
  let n = (e.title?.length ?? 0) + (e.description?.length ?? 0)
  n += (e.footer?.text.length ?? 0) + (e.author?.name.length ?? 0)
  for (const f of e.fields ?? []) n += f.name.length + f.value.length
  return n
}

/** The value without its objects' null fields, at any depth (a null inside a list stays, and fails the check). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) if (v !== null) out[key] = withoutNulls(v)
  return out
}

/** The embeds to store (undefined: not given; null: none), or 400 50035 naming each bad field. */
export function checkEmbeds(sent: unknown): Embed[] | undefined {
  if (sent === undefined) return undefined
  if (sent === null) return []
  const input = embedsCheck({ embeds: withoutNulls(sent) }).embeds
  const check = new FormCheck()
  const embeds = input.map((e, i) => embed(check, i, e))
  if (embeds.reduce((n, e) => n + textLength(e), 0) > MAX_TEXT)
    check.add(['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', `Embed size exceeds maximum size of ${MAX_TEXT}`)
  check.done()
  return embeds
}
