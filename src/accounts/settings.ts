// The login settings object (partial user preferences) that login and registration return, and their change.
import { transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { cachedUser, updateUser } from './store'
import type { UserRow } from './tables'

export const THEMES = ['dark', 'light'] as const
export const LOCALES = [
  'id',
  'da',
  'de',
  'en-GB',
  'en-US',
  'es-ES',
  'es-419',
  'fr',
  'hr',
  'it',
  'lt',
  'hu',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'ro',
  'fi',
  'sv-SE',
  'vi',
  'tr',
  'cs',
  'el',
  'bg',
  'ru',
  'uk',
  'hi',
  'th',
  'zh-CN',
  'ja',
  'zh-TW',
  'ko',
] as const

export function loginSettings(user: Pick<UserRow, 'locale' | 'theme'>) {
  return { locale: user.locale, theme: user.theme }
}

/** PATCH /users/@me/settings: the change and USER_SETTINGS_UPDATE to the user's sessions, in one transaction. */
export async function changeSettings(userId: string, patch: Partial<Pick<UserRow, 'locale' | 'theme'>>) {
  return await transaction(async () => {
    if (Object.keys(patch).length) await updateUser(userId, patch)
    const settings = loginSettings((await cachedUser(userId))!)
    events.publish(topics.account(userId), 'USER_SETTINGS_UPDATE', settings)
    return settings
  })
}
