// Discord's username rules (since the 2023 unique-username change): 2-32 characters, lower-case a-z, 0-9, _ and .,
// no two periods in a row, and no reserved words.
import { randomBytes } from 'node:crypto'
import { findUserByUsername } from '../accounts/store'

const RESERVED = ['discord', 'everyone', 'here', 'clyde', 'system']

/** A Discord field error for an invalid username, or null when it is valid. */
export function usernameProblem(username: string): [code: string, message: string] | null {
  if (username.length < 2 || username.length > 32)
    return ['BASE_TYPE_BAD_LENGTH', 'Must be between 2 and 32 in length.']
  if (!/^[a-z0-9_.]+$/.test(username) || username.includes('..')) {
    return [
      'USERNAME_INVALID_CHARACTERS',
      'Username can only contain lowercase letters, numbers, underscores _ and periods.',
    ]
  }
  if (RESERVED.some((word) => username.includes(word)))
    return ['USERNAME_INVALID_CONTAINS', 'Username cannot contain a reserved word.']
  return null
}

export async function isUsernameTaken(username: string): Promise<boolean> {
  return !!(await findUserByUsername(username))
}

const WORDS = [
  'swift',
  'quiet',
  'brave',
  'lucky',
  'sunny',
  'cosmic',
  'amber',
  'maple',
  'otter',
  'falcon',
  'pixel',
  'comet',
]

function randomWord(): string {
  const [a, b] = randomBytes(2)
  return `${WORDS[a % WORDS.length]}${WORDS[b % WORDS.length]}`
}

/** A free, valid username derived from a display name (or random), e.g. "Cool Person" -> "coolperson", "coolperson_42". */
export async function suggestUsername(globalName?: string | null): Promise<string> {
  let base = (globalName ?? '')
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9_.]/g, '')
    .replace(/\.{2,}/g, '.')
    .slice(0, 26)
  if (base.length < 2 || usernameProblem(base)) base = randomWord()
  if (!(await isUsernameTaken(base))) return base
  for (let i = 0; i < 20; i++) {
    const candidate = `${base.slice(0, 26)}_${randomBytes(3).readUIntBE(0, 3) % 100000}`
    if (!(await isUsernameTaken(candidate))) return candidate
  }
  return `${randomWord().slice(0, 20)}_${randomBytes(4).toString('hex')}`
}
