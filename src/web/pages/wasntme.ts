// /wasntme/<token>: explain what reverting does, then undo the e-mail change with a new password.
import { api, session } from './lib/api'
import { strengthMeter } from './lib/password'
import { $, forgetLinkToken, show, submitting, takeLinkToken, value } from './lib/ui'

const form = $<HTMLFormElement>('#revert-form')
const token = takeLinkToken('wasntme', '/wasntme')
strengthMeter($<HTMLInputElement>('#password'))

if (!token) {
  show(form, false)
  show($('#no-token'))
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(form, async () => {
    const reply = await api<{ email: string }>(
      'POST',
      '/auth/revert',
      { token: token!, password: value(form, 'password', false) },
      { anonymous: true },
    )
    forgetLinkToken('wasntme')
    session.clear() // every session of the account has ended
    $('#restored-email').textContent = reply.email
    show(form, false)
    show($('#done'))
  })
})
