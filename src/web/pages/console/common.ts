// What the console's sections share: the elevated API call, a user's string as isolated text, times, facts, cards.
import { client } from '../lib/client'
import { $, el, show } from '../lib/ui'

const CARDS = [
  'login-step',
  'refused',
  'dashboard',
  'users',
  'user',
  'applications',
  'application',
  'lobby',
  'experiments',
  'audit',
] as const
export type Card = (typeof CARDS)[number]

/** Show one card, hide the others. */
export function only(id: Card) {
  for (const card of CARDS) show($(`#${card}`), card === id)
}

/** A user-supplied string, as text, isolated from the text around it. */
export const text = (s: string | null | undefined) => el('bdi', {}, s ?? '')
export const when = (iso: string) => el('time', { datetime: iso }, new Date(iso).toLocaleString())

export async function admin<T>(
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  options: { body?: unknown; query?: object } = {},
) {
  return (await client.rest.request(method, `/admin${path}`, options as never)) as T
}

export function fact(term: string, ...value: (Node | string)[]) {
  return [el('dt', {}, term), el('dd', {}, ...value)]
}

/** A metadata map as text: `key=value` pairs, each isolated. */
export function pairs(map: Record<string, string> | null | undefined): (Node | string)[] {
  const entries = Object.entries(map ?? {})
  if (!entries.length) return ['—']
  return entries.flatMap(([k, v], i) => [i ? ', ' : '', text(k), '=', text(v)])
}

/** A numbered statistic for a `dl.stats`. */
export const stat = (term: string, value: number | string) =>
  el('div', {}, el('dt', {}, term), el('dd', {}, typeof value === 'number' ? value.toLocaleString() : value))
