// /reset#token=…: a new password, then the second factor when the account has one (the same request repeated with
// the ticket and the code).
import { api, ApiFailure, session } from './lib/api'
import { factorForm, type MfaChallenge, methodsOfLogin } from './lib/mfa'
import { strengthMeter } from './lib/password'
import { $, forgetLinkToken, show, submitting, takeLinkToken, value } from './lib/ui'

type ResetReply = MfaChallenge & { token?: string }

const form = $<HTMLFormElement>('#reset-form')
const mfaStep = $('#mfa-step')
const token = takeLinkToken('reset')
strengthMeter($<HTMLInputElement>('#password'))

function done(reply: ResetReply) {
  if (!reply.token) throw new Error('The server did not return a session.')
  forgetLinkToken('reset')
  session.set(reply.token)
  show(form, false)
  show(mfaStep, false)
  show($('#done'))
}

if (!token) {
  show(form, false)
  show($('#no-token'))
} else {
  // A used or expired link says so at once, instead of failing only once the new password is typed. The check
  // spends nothing; when it cannot answer (offline, too many checks) the form is shown and the reset itself decides.
  show(form, false)
  show($('#checking'))
  api('POST', '/auth/reset/check', { token }, { anonymous: true }).then(
    () => {
      show($('#checking'), false)
      show(form)
      $<HTMLInputElement>('#password').focus()
    },
    (error) => {
      show($('#checking'), false)
      if (error instanceof ApiFailure && error.status === 400) {
        forgetLinkToken('reset')
        show($('#link-used'))
      } else show(form)
    },
  )
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(form, async () => {
    const password = value(form, 'password', false)
    if (password !== value(form, 'confirm', false)) {
      throw new ApiFailure(400, 50035, 'Invalid Form Body', {
        errors: { confirm: { _errors: [{ code: 'PASSWORD_MISMATCH', message: 'The passwords do not match.' }] } },
      })
    }
    const body = { token: token!, password, source: '/reset' }
    const reply = await api<ResetReply>('POST', '/auth/reset', body)
    if (!reply.mfa || !reply.ticket) return done(reply)
    const ticket = reply.ticket
    mfaStep.replaceChildren(
      factorForm({
        methods: methodsOfLogin(reply),
        title: 'Two-factor authentication',
        submit: async (method, code) =>
          done(await api<ResetReply>('POST', '/auth/reset', { ...body, ticket, method, code })),
        sendCode: async (type) =>
          (await api<{ phone?: string }>('POST', `/auth/mfa/${type}/send`, { ticket }, { anonymous: true })).phone,
        onCancel: () => (show(mfaStep, false), show(form)),
      }),
    )
    show(form, false)
    show(mfaStep)
    mfaStep.querySelector<HTMLInputElement>('input:not([type=radio])')?.focus()
  })
})
