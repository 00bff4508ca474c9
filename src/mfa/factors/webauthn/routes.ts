// Security keys and passkeys: registration (a first key turns MFA on and brings backup codes), the list, renaming,
// removal (elevated), and the passwordless login with a discoverable credential (conditional UI).
import { completeLogin } from '../../../accounts/complete-login'
import { clientInfo } from '../../../accounts/client-info'
import { loginSettings } from '../../../accounts/settings'
import { Errors, formError } from '../../../core/errors'
import { perIp, reserve } from '../../../core/ratelimit'
import { clientIp } from '../../../http/client-ip'
import { NO_CONTENT } from '../../../http/docs'
import { endpoint } from '../../../http/endpoint'
import { optionalCaller } from '../../../http/identity'
import { noContent } from '../../../http/respond'
import { accountOf } from '../../caller'
import { LoggedIn } from '../../schemas'
import { invalidCode, invalidTicket } from '../../errors'
import type { FactorRoutesContext } from '../../factor'
import { issueTicket, loadTicket, MFA_PER_IP, redeemTicket, wrongCode } from '../../tickets'
import { newBackupCodes } from '../backup/backup-codes'
import {
  AuthenticatorAnswer,
  AuthenticatorsAnswer,
  ConditionalFinishSchema,
  ConditionalStartAnswer,
  CredentialAnswer,
  CredentialSchema,
  KeyIdParam,
  RenameSchema,
} from './schemas'
import {
  authenticationOptions,
  authenticatorView,
  credentialsOf,
  addCredential,
  registrationOptions,
  removeCredential,
  renameCredential,
  verifyAssertion,
  verifyRegistration,
} from './webauthn'

export const webauthnEndpoints = (mfa: FactorRoutesContext) => [
  endpoint(
    {
      method: 'POST',
      path: '/auth/conditional/start',
      auth: null,
      tag: 'mfa',
      summary: 'Start a passwordless WebAuthn login',
      answers: { 200: ConditionalStartAnswer },
    },
    async ({ request, server }) => {
      // Already logged in: the client gets its token back, as the spec says.
      const caller = await optionalCaller(request)
      if (caller?.kind === 'user') {
        return {
          user_id: caller.userId,
          token: request.headers.get('authorization')!.trim(),
          user_settings: loginSettings(await accountOf(caller.userId)),
        }
      }
      await reserve(perIp('conditional-ip', clientIp(request, server), MFA_PER_IP))
      const options = await authenticationOptions(null, 'required')
      return {
        ticket: await issueTicket('conditional', null, { challenge: options.challenge }),
        challenge: options.json,
      }
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/conditional/finish',
      auth: null,
      tag: 'mfa',
      summary: 'Finish a passwordless WebAuthn login',
      body: ConditionalFinishSchema,
      answers: { 200: LoggedIn },
    },
    async ({ request, server, body }) => {
      const row = await loadTicket('conditional', body.ticket)
      if (!(await redeemTicket(row))) throw invalidTicket() // one assertion per challenge
      const credential = await verifyAssertion(body.credential, row.challenge!, null)
      if (!credential) throw invalidCode()
      const user = await accountOf(credential.userId)
      if (user.state !== 'active' || user.compromised) throw invalidCode()
      return completeLogin(user, {
        client: clientInfo(request, clientIp(request, server)),
        loginSource: body.login_source,
        giftCodeSkuId: body.gift_code_sku_id,
      })
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/mfa/webauthn/credentials',
      auth: 'user',
      tag: 'mfa',
      summary: 'Start (no body) or finish registering a security key',
      // Checked in the handler (a start has none): the schema documents it.
      handlerBody: CredentialSchema,
      answers: { 200: CredentialAnswer },
    },
    async ({ caller: me, body }) => {
      const input = (body ?? {}) as { ticket?: unknown; name?: unknown; credential?: unknown }
      if (input.ticket === undefined && input.credential === undefined) {
        const options = await registrationOptions(await accountOf(me.userId))
        return {
          ticket: await issueTicket('webauthn_register', me.userId, { challenge: options.challenge }),
          challenge: options.json,
        }
      }
      const name = typeof input.name === 'string' ? input.name.trim() : ''
      if (name.length < 1 || name.length > 32)
        throw formError({ name: ['BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 32 in length.'] })
      const row = await loadTicket('webauthn_register', input.ticket)
      if (row.userId !== me.userId) throw invalidTicket()
      const firstFactor = !(await mfa.enabled(me.userId))
      const verified = await verifyRegistration(me.userId, row.challenge!, name, input.credential)
      const added =
        verified && (await addCredential(mfa, verified, row, firstFactor ? await newBackupCodes() : undefined))
      if (!added) throw await wrongCode(row)
      const { created, backup_codes } = added
      return { ...authenticatorView(created), ...(backup_codes ? { backup_codes } : {}) }
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/mfa/webauthn/credentials',
      auth: 'user',
      tag: 'mfa',
      summary: 'Security keys',
      answers: { 200: AuthenticatorsAnswer },
    },
    async ({ caller }) => (await credentialsOf(caller.userId)).map(authenticatorView),
  ),
  endpoint(
    {
      method: 'PATCH',
      path: '/users/@me/mfa/webauthn/credentials/:id',
      auth: 'user',
      tag: 'mfa',
      summary: 'Rename a security key',
      params: { id: KeyIdParam },
      body: RenameSchema,
      answers: { 200: AuthenticatorAnswer },
    },
    async ({ caller, params, body }) => {
      const renamed = await renameCredential(caller.userId, params.id, body.name.trim())
      if (!renamed) throw Errors.notFound()
      return authenticatorView(renamed)
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/users/@me/mfa/webauthn/credentials/:id',
      auth: 'user',
      tag: 'mfa',
      summary: 'Remove a security key (elevated)',
      params: { id: KeyIdParam },
      answers: { 204: NO_CONTENT },
    },
    async ({ caller: me, params, request }) => {
      if (!(await credentialsOf(me.userId)).some((c) => c.id === params.id)) throw Errors.notFound()
      await mfa.requireElevation(me, request)
      if (!(await removeCredential(mfa, me.userId, params.id))) throw Errors.notFound()
      return noContent()
    },
  ),
]
