// TOTP's enrolment (with the password and a first code) and its removal (elevated): enrolment.ts makes the changes.
import { confirmPassword } from '../../../accounts/passwords'
import { endpoint } from '../../../http/endpoint'
import { accountOf } from '../../caller'
import { alreadyEnrolled, invalidCode, invalidSecret, notEnrolled } from '../../errors'
import type { FactorRoutesContext } from '../../factor'
import { TokenAnswer } from '../../schemas'
import { newBackupCodes } from '../backup/backup-codes'
import { disableTotp, enableTotp } from './enrolment'
import { TotpEnableAnswer, TotpEnableSchema } from './schemas'
import { hasTotp, matchingStep, parseSecret } from './totp'

export const totpEndpoints = (mfa: FactorRoutesContext) => [
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/mfa/totp/enable',
      auth: 'user',
      tag: 'mfa',
      summary: 'Enable TOTP',
      body: TotpEnableSchema,
      answers: { 200: TotpEnableAnswer },
    },
    async ({ caller: me, body }) => {
      await confirmPassword(await accountOf(me.userId), body.password)
      if (await hasTotp(me.userId)) throw alreadyEnrolled()
      const secret = parseSecret(body.secret)
      if (!secret) throw invalidSecret()
      const step = matchingStep(secret, body.code.replace(/\s+/g, ''))
      if (step === undefined) throw invalidCode()
      // The secret and its backup codes commit together (codes hashed first): a crash never leaves TOTP on
      // without backup codes.
      return await enableTotp(mfa, me, secret, step, await newBackupCodes())
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/mfa/totp/disable',
      auth: 'user',
      tag: 'mfa',
      summary: 'Disable TOTP (elevated)',
      answers: { 200: TokenAnswer },
    },
    async ({ caller: me, request }) => {
      if (!(await hasTotp(me.userId))) throw notEnrolled()
      await mfa.requireElevation(me, request)
      return { token: await disableTotp(mfa, me) }
    },
  ),
]
