// /reset#token=…: a new password, then the second factor when the account has one (the same request repeated with
// the ticket and the code).
import { ApiError, client } from './lib/client'
import { fieldError } from './lib/errors'
import { factorForm } from './lib/factor-form'
import { strengthMeter } from './lib/password'
import { $, forgetLinkToken, show, submitting, takeLinkToken, value } from './lib/ui'

const form = $<HTMLFormElement>('#reset-form')
const mfaStep = $('#mfa-step')
const token = takeLinkToken('reset')
strengthMeter($<HTMLInputElement>('#password'))

/** The new password is set and this browser logged in (the SDK keeps the token). */
function done() {
  forgetLinkToken('reset')
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
  client.rest.post('/auth/reset/check', { body: { token }, auth: false }).then(
    () => {
      show($('#checking'), false)
      show(form)
      $<HTMLInputElement>('#password').focus()
    },
    (error) => {
      show($('#checking'), false)
      if (error instanceof ApiError && error.status === 400) {
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
      throw fieldError('confirm', 'PASSWORD_MISMATCH', 'The passwords do not match.')
    }
    const step = await client.auth.reset({ token: token!, password })
    if (!step.mfa) return done()
    mfaStep.replaceChildren(
      factorForm({
        step: step.mfa,
        title: 'Two-factor authentication',
        done,
        onCancel: () => (show(mfaStep, false), show(form)),
      }),
    )
    show(form, false)
    show(mfaStep)
    mfaStep.querySelector<HTMLInputElement>('input:not([type=radio])')?.focus()
  })
})
