// Embeds: what concerns a message's embeds together (at most 6000 characters of titles, descriptions, field names and
// values, footer texts and author names), and the embed as stored and answered: type "rich", fields with `inline`,
// timestamps in one form, unset (or null) fields left out. The rules of single fields are embed-fields.ts's.
import { formError } from '../core/errors'
import { parsedTime } from './embed-fields'
import { MAX_EMBED_TEXT } from './limits'
import type { EmbedInput } from './schemas'
import type { Embed } from './tables'

/** An embed as stored (null fields dropped: undefined ones are left out of the JSON column). */
function stored(e: EmbedInput): Embed {
  return {
    type: 'rich',
    title: e.title ?? undefined,
    description: e.description ?? undefined,
    url: e.url ?? undefined,
    timestamp: e.timestamp ? new Date(parsedTime(e.timestamp)).toISOString() : undefined,
    color: e.color ?? undefined,
    footer: e.footer ? { text: e.footer.text, icon_url: e.footer.icon_url ?? undefined } : undefined,
    image: e.image ? { url: e.image.url } : undefined,
    thumbnail: e.thumbnail ? { url: e.thumbnail.url } : undefined,
    author: e.author
      ? { name: e.author.name, url: e.author.url ?? undefined, icon_url: e.author.icon_url ?? undefined }
      : undefined,
    fields: e.fields?.map((f) => ({ name: f.name, value: f.value, inline: f.inline ?? false })),
  }
}

/** The characters Discord counts towards the 6000 of a message. */
function textLength(e: Embed): number {
  let n = (e.title?.length ?? 0) + (e.description?.length ?? 0)
  n += (e.footer?.text.length ?? 0) + (e.author?.name.length ?? 0)
  for (const f of e.fields ?? []) n += f.name.length + f.value.length
  return n
}

/** The embeds to store (undefined: not given; null: none), or 400 50035 past 6000 characters in all. */
export function checkEmbeds(input: EmbedInput[] | null | undefined): Embed[] | undefined {
  if (input === undefined) return undefined
  const embeds = (input ?? []).map(stored)
  if (embeds.reduce((n, e) => n + textLength(e), 0) > MAX_EMBED_TEXT)
    throw formError({ embeds: ['MAX_EMBED_SIZE_EXCEEDED', `Embed size exceeds maximum size of ${MAX_EMBED_TEXT}`] })
  return embeds
}
