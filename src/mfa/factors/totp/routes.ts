// TOTP's enrolment (with the password and a first code) and its removal (elevated).
import { confirmPassword } from '../../../accounts/passwords'
import { endSessions, replaceSession } from '../../../accounts/sessions'
import { transaction } from '../../../db/client'
import { endpoint } from '../../../http/endpoint'
import { accountOf } from '../../caller'
import { alreadyEnrolled, invalidCode, invalidSecret, notEnrolled } from '../../errors'
import type { FactorRoutesContext } from '../../factor'
import { TokenAnswer } from '../../schemas'
import { newBackupCodes, storeBackupCodes } from '../backup/backup-codes'
import { TotpEnableAnswer, TotpEnableSchema } from './schemas'
import { hasTotp, matchingStep, parseSecret, removeTotp, saveTotp } from './totp'

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
      const fresh = await newBackupCodes()
      const backup_codes = await transaction(async () => {
        if (!(await saveTotp(me.userId, secret, step))) throw alreadyEnrolled()
        return storeBackupCodes(me.userId, fresh)
      })
      // New credentials, new token: every other session ends, this one continues under a new token.
      await endSessions(me.userId, me.sessionId)
      const token = await replaceSession(me)
      await mfa.userChanged(me.userId)
      return { token, backup_codes }
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
      await removeTotp(me.userId)
      await mfa.dropDependents(me.userId)
      const token = await replaceSession(me)
      await mfa.userChanged(me.userId)
      return { token }
    },
  ),
]
