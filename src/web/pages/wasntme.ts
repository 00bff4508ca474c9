// /wasntme/<token>: explain what reverting does, then undo the e-mail change with a new password.
import { client } from './lib/client'
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
    const reply = await client.rest.post('/auth/revert', {
      body: { token: token!, password: value(form, 'password', false) },
      auth: false,
    })
    forgetLinkToken('wasntme')
    client.setToken(null) // every session of the account has ended
    $('#restored-email').textContent = reply.email
    show(form, false)
    show($('#done'))
  })
})
