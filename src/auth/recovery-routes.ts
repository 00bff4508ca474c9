// REST for recovery and account changes: forgot/reset/revert (unauthenticated), PATCH /users/@me and
// POST /auth/sessions/logout (elevated).
import type { UserCaller } from '../core/caller'
import { Errors } from '../core/errors'
import { clientIp } from '../http/client-ip'
import { optionalCaller } from '../http/identity'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { noContent } from '../http/respond'
import { secondFactor } from '../accounts/second-factor'
import { cachedUser } from '../accounts/store'
import { clientInfo } from '../accounts/client-info'
import { confirmPassword } from '../accounts/passwords'
import {
  changeEmail,
  changePassword,
  checkResetToken,
  deactivateAccount,
  forgotPassword,
  resetPassword,
  revertAccount,
  saveProfile,
  saveProvisionalName,
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
import { endSessionsByHash } from '../accounts/sessions'

const tag = 'auth'

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
    const user = await cachedUser(me.userId)
    if (!user) throw Errors.unauthorized()
    await confirmPassword(user, body.password)
    if (await secondFactor().enabled(me.userId)) await secondFactor().requireElevation(me, request)
    await deactivateAccount(me.userId, state)
    return noContent()
  }
}

/** The recovery and account-change endpoints (http/endpoint.ts), part of the auth domain's list. */
export const recoveryEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/auth/forgot',
      auth: null,
      tag,
      summary: 'Send a password reset link (e-mail) or code (phone)',
      body: ForgotSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ request, server, body }) => (await forgotPassword(body.login, clientIp(request, server)), noContent()),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/reset',
      auth: null,
      tag,
      summary: 'Set a new password with a reset token',
      body: ResetSchema,
      answers: { 200: ResetAnswer },
    },
    async ({ request, server, body }) => {
      const caller = await optionalCaller(request)
      const client = clientInfo(request, clientIp(request, server))
      return resetPassword(body, client, caller?.kind === 'user' ? caller : undefined)
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/reset/check',
      auth: null,
      tag,
      summary:
        'Check a reset token without spending it: 204 while /auth/reset would take it, else 400 TOKEN_INVALID (the reset page asks it when it opens)',
      body: ResetCheckSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ request, server, body }) => (await checkResetToken(body.token, clientIp(request, server)), noContent()),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/revert',
      auth: null,
      tag,
      summary: 'Undo an e-mail change and secure the account',
      body: RevertSchema,
      answers: { 200: RevertAnswer },
    },
    ({ body }) => revertAccount(body.token, body.password),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/disable',
      auth: 'user',
      tag,
      summary: 'Disable the account (password; elevated with MFA); log in with undelete to restore',
      body: PasswordSchema,
      answers: { 204: NO_CONTENT },
    },
    deactivation('disabled'),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/delete',
      auth: 'user',
      tag,
      summary: 'Schedule the account for deletion (password; elevated with MFA); log in with undelete to restore',
      body: PasswordSchema,
      answers: { 204: NO_CONTENT },
    },
    deactivation('deleted'),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/sessions/logout',
      auth: 'user',
      tag,
      summary: 'End sessions by their id hashes (elevated)',
      body: SessionsLogoutSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller: me, body, request }) => {
      await secondFactor().requireElevation(me, request)
      await endSessionsByHash(me.userId, body.session_id_hashes)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/users/@me',
      // A provisional account's Bearer token (sdk.social_layer) may change its display name only (Discord's
      // UpdateProvisionalAccountDisplayName); every other change is a user session's.
      auth: { kinds: ['user', 'bearer'], scope: 'sdk.social_layer' },
      tag: 'users',
      summary: "Change the e-mail (elevated), password or display name (a provisional account's token: the name)",
      body: PatchMeSchema,
      answers: { 200: PatchMeAnswer },
    },
    async ({ caller, body, request }) => {
      if (caller.kind === 'bearer') return await saveProvisionalName(caller, body)
      if (caller.kind !== 'user') throw Errors.unauthorized()
      const me = caller
      const user = await cachedUser(me.userId)
      if (!user) throw Errors.unauthorized()
      let token: string | undefined
      if (body.email !== undefined || body.new_password !== undefined) {
        await confirmPassword(user, body.password)
        if (body.email !== undefined) {
          await secondFactor().requireElevation(me, request)
          await changeEmail(user, body.email)
        }
        // A new password ends every other session; this one continues under a new token.
        if (body.new_password !== undefined) token = await changePassword(me, body.new_password)
      }
      const view = await saveProfile(me.userId, body.global_name)
      return { ...view, ...(token ? { token } : {}) }
    },
  ),
]
