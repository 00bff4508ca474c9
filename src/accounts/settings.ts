// The login settings object (partial user preferences) that login and registration return.
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
