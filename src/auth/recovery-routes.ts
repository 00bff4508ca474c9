// REST for recovery and account changes: forgot/reset/revert (unauthenticated), PATCH /users/@me and
// POST /auth/sessions/logout (elevated).
import { Elysia } from 'elysia'
import type { UserCaller } from '../core/caller'
import { Errors } from '../core/errors'
import { events, topics } from '../gateway/bus'
import { clientIp } from '../http/client-ip'
import { identity, optionalCaller } from '../http/identity'
import { doc, NO_CONTENT } from '../http/docs'
import { noContent } from '../http/respond'
import { passwordRefused } from '../accounts/errors'
import { secondFactor } from '../accounts/second-factor'
import { privateUser } from '../accounts/serialize'
import { findUser, updateUser } from '../accounts/store'
import { clientInfo } from '../accounts/client-info'
import { confirmPassword, hashPassword } from '../accounts/passwords'
import { passwordProblem } from '../accounts/password-policy'
import {
  changeEmail,
  checkResetToken,
  deactivateAccount,
  forgotPassword,
  resetPassword,
  revertAccount,
} from './recovery'
import {
  ForgotSchema,
  PasswordSchema,
  PatchMeAnswer,
  PatchMeSchema,
  ResetAnswer,
  ResetCheckSchema,
  ResetSchema,
  RevertAnswer,
  RevertSchema,
  SessionsLogoutSchema,
} from './schemas'
import { endSessions, endSessionsByHash, replaceSession } from '../accounts/sessions'

type Ctx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null }
const ipOf = (ctx: Ctx) => clientIp(ctx.request, ctx.server)

export const recoveryPublicRoutes = new Elysia()
  .post('/auth/forgot', async (ctx) => (await forgotPassword(ctx.body.login, ipOf(ctx)), noContent()), {
    body: ForgotSchema,
    ...doc('auth', 'Send a password reset link (e-mail) or code (phone)', { 204: NO_CONTENT }),
  })
  .post(
    '/auth/reset',
    async (ctx) => {
      const caller = await optionalCaller(ctx.request)
      return resetPassword(ctx.body, clientInfo(ctx.request, ipOf(ctx)), caller?.kind === 'user' ? caller : undefined)
    },
    {
      body: ResetSchema,
      ...doc('auth', 'Set a new password with a reset token', { 200: ResetAnswer }),
    },
  )
  .post('/auth/reset/check', async (ctx) => (await checkResetToken(ctx.body.token, ipOf(ctx)), noContent()), {
    body: ResetCheckSchema,
    ...doc(
      'auth',
      'Check a reset token without spending it: 204 while /auth/reset would take it, else 400 TOKEN_INVALID (the reset page asks it when it opens)',
      { 204: NO_CONTENT },
    ),
  })
  .post('/auth/revert', async ({ body }) => revertAccount(body.token, body.password), {
    body: RevertSchema,
    ...doc('auth', 'Undo an e-mail change and secure the account', { 200: RevertAnswer }),
  })

/** POST /users/@me/disable and /users/@me/delete: the password, and elevation when MFA is on. */
function deactivation(state: 'disabled' | 'deleted') {
  return async ({
    caller: me,
    body,
    request,
  }: {
    caller: UserCaller
    body: { password?: string }
    request: Request
  }) => {
    const user = await findUser(me.userId)
    if (!user) throw Errors.unauthorized()
    await confirmPassword(user, body.password)
    if (await secondFactor().enabled(me.userId)) await secondFactor().requireElevation(me, request)
    await deactivateAccount(me.userId, state)
    return noContent()
  }
}

export const accountChangeRoutes = new Elysia()
  .use(identity)
  .post('/users/@me/disable', deactivation('disabled'), {
    user: true,
    body: PasswordSchema,
    ...doc('auth', 'Disable the account (password; elevated with MFA); log in with undelete to restore', {
      204: NO_CONTENT,
    }),
  })
  .post('/users/@me/delete', deactivation('deleted'), {
    user: true,
    body: PasswordSchema,
    ...doc('auth', 'Schedule the account for deletion (password; elevated with MFA); log in with undelete to restore', {
      204: NO_CONTENT,
    }),
  })
  .post(
    '/auth/sessions/logout',
    async ({ caller: me, body, request }) => {
      await secondFactor().requireElevation(me, request)
      await endSessionsByHash(me.userId, body.session_id_hashes)
      return noContent()
    },
    {
      user: true,
      body: SessionsLogoutSchema,
      ...doc('auth', 'End sessions by their id hashes (elevated)', { 204: NO_CONTENT }),
    },
  )
  .patch(
    '/users/@me',
    async ({ caller: me, body, request }) => {
      const user = await findUser(me.userId)
      if (!user) throw Errors.unauthorized()
      let token: string | undefined
      if (body.email !== undefined || body.new_password !== undefined) {
        await confirmPassword(user, body.password)
        if (body.email !== undefined) {
          await secondFactor().requireElevation(me, request)
          await changeEmail(user, body.email)
        }
        if (body.new_password !== undefined) {
          const problem = passwordProblem(body.new_password)
          if (problem) throw passwordRefused('new_password', problem)
          await updateUser(me.userId, { passwordHash: await hashPassword(body.new_password) })
          // A new password ends every other session; this one continues under a new token.
          await endSessions(me.userId, me.sessionId)
          token = await replaceSession(me)
        }
      }
      if (body.global_name !== undefined) await updateUser(me.userId, { globalName: body.global_name?.trim() || null })
      const view = privateUser((await findUser(me.userId))!, await secondFactor().enabled(me.userId))
      events.publish(topics.account(me.userId), 'USER_UPDATE', view)
      return { ...view, ...(token ? { token } : {}) }
    },
    {
      user: true,
      body: PatchMeSchema,
      ...doc('users', 'Change the e-mail (elevated), password or display name', { 200: PatchMeAnswer }),
    },
  )
