import { config, setConfig, type Config } from '../../src/config'
import { readOutbox } from '../../src/delivery'
import { api } from '../helpers'

let n = 0
export function uniqueEmail(prefix = 'r') {
  n += 1
  return `${prefix}${Date.now().toString(36)}${n}${Math.random().toString(36).slice(2, 6)}@example.test`
}
export function uniqueName(prefix = 'user') {
  n += 1
  return `${prefix}${Date.now().toString(36)}${n}${Math.random().toString(36).slice(2, 5)}`
}

export const PASSWORD = 'correct horse battery staple'

/** Run with some configuration changed, then restore it. */
export async function withConfig<T>(patch: Partial<Config>, fn: () => Promise<T>): Promise<T> {
  const before = config()
  setConfig({ ...before, ...patch })
  try {
    return await fn()
  } finally {
    setConfig({ ...config(), ...Object.fromEntries(Object.keys(patch).map((k) => [k, before[k as keyof Config]])) })
  }
}

/** Register over HTTP; returns the token and the body. */
export async function registerUser(extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const email = uniqueEmail()
  const body = {
    username: uniqueName(),
    email,
    password: PASSWORD,
    date_of_birth: '1990-01-01',
    consent: true,
    ...extra,
  }
  const r = await api('POST', '/auth/register', { body, headers })
  return { r, email, username: body.username as string }
}

/** The token carried by the newest outbox message to an address, in a link's fragment or path. */
export async function lastLinkToken(to: string, path: string): Promise<string | undefined> {
  const [message] = await readOutbox(to)
  const m = new RegExp(`/${path}(?:#token=|/)([^\\s]+)`).exec(message?.body ?? '')
  return m ? decodeURIComponent(m[1]) : undefined
}

export async function lastSmsCode(to: string): Promise<string | undefined> {
  const [message] = await readOutbox(to)
  return /(\d{6})/.exec(message?.body ?? '')?.[1]
}
