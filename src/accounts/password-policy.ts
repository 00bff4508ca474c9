// Password policy: 8-72 characters and not a common password (zxcvbn-ts' offline dictionaries, far beyond the
// top 3000 ASVS asks for); strength 0-4 from zxcvbn-ts.
// The dictionaries are decompressed when their module is evaluated (tens of ms), so they are required on first use,
// not imported at start: a server that nobody registers with never pays for them.
import type { ZxcvbnFactory } from '@zxcvbn-ts/core'

export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 72

let factory: ZxcvbnFactory | undefined
function zxcvbn() {
  if (factory) return factory
  const { ZxcvbnFactory } = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core')
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common')
  const en = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en')
  factory = new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  })
  return factory
}

export function passwordStrength(password: string, userInputs: string[] = []): 0 | 1 | 2 | 3 | 4 {
  return zxcvbn().check(password.slice(0, 256), userInputs).score
}

function isCommon(password: string): boolean {
  const result = zxcvbn().check(password.slice(0, 256))
  // The whole password is one entry of the common-password list (possibly l33t or reversed).
  return (
    result.sequence.length === 1 &&
    result.sequence[0].pattern === 'dictionary' &&
    String((result.sequence[0] as { dictionaryName?: string }).dictionaryName).startsWith('passwords')
  )
}

/** A password's length outside the policy, as a Discord field error; null when it fits. Cheap: schemas use it. */
export function passwordLengthProblem(password: string): [code: string, message: string] | null {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    return ['BASE_TYPE_BAD_LENGTH', `Must be between ${PASSWORD_MIN} and ${PASSWORD_MAX} in length.`]
  }
  return null
}

/**
 * Why a password does not meet today's policy, as a Discord field error; null when it does. The common-password
 * look-up costs milliseconds: a handler asks it only after its rate limit counted the attempt.
 */
export function passwordProblem(password: string): [code: string, message: string] | null {
  const length = passwordLengthProblem(password)
  if (length) return length
  if (isCommon(password)) return ['PASSWORD_TOO_WEAK', 'Password is too weak or common to use.']
  return null
}
