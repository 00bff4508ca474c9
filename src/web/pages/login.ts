// /login: e-mail or phone + password, then the second factor the account has; the new-location notice; passkeys
// (autofill through conditional mediation, or the button); forgot password by e-mail or text message.
import { logOut } from './lib/nav'
import { browserSupportsWebAuthnAutofill } from '@simplewebauthn/browser'
import { ApiError, client, fieldCodes, type LoginStep, type MfaStep } from './lib/client'
import { fieldError, formErrors } from './lib/errors'
import { factorForm } from './lib/factor-form'
import { startQrLogin } from './qr-login'
import { $, el, passkeysUnavailable, redirectTarget, show, showErrors, submitting, value } from './lib/ui'

const loginForm = $<HTMLFormElement>('#login-form')
const undeleteForm = $<HTMLFormElement>('#undelete-form')
const phoneResetForm = $<HTMLFormElement>('#phone-reset-form')
const mfaStep = $('#mfa-step')
const notice = $('#login-notice')
const steps = [loginForm, undeleteForm, phoneResetForm, mfaStep]

function step(visible: HTMLElement) {
  for (const s of steps) show(s, s === visible)
  // The QR panel is another way to log in: not offered beside a second-factor step (UX-T4 finding 11).
  document.body.dataset.step = visible === loginForm ? 'login' : 'other'
  visible.querySelector<HTMLElement>('input:not([type=radio]), button[type=submit]')?.focus()
}
for (const back of document.querySelectorAll<HTMLButtonElement>('[data-back]'))
  back.addEventListener('click', () => step(loginForm))

/** Logged in (the SDK keeps the token): go where the person was going. */
function finish(session: { requiredActions?: string[] }) {
  location.assign(
    session.requiredActions?.includes('update_password')
      ? '/settings/security?required=update_password'
      : redirectTarget(),
  )
}

async function logIn(undelete: boolean) {
  notice.textContent = ''
  try {
    const step: LoginStep = await client.auth.login({
      login: value(loginForm, 'login'),
      password: value(loginForm, 'password', false),
      undelete,
    })
    if (step.mfa) return startMfa(step.mfa)
    finish(step)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (fieldCodes(error, 'login').includes('ACCOUNT_LOGIN_VERIFICATION_EMAIL')) {
      step(loginForm)
      notice.textContent =
        'New login location detected. We sent you an e-mail: open its link to authorize this location, then log in again.'
      return
    }
    // Locked by the operator: said calmly, with the way out one click away (UX-T4 finding 35).
    if (fieldCodes(error, 'login').includes('ACCOUNT_COMPROMISED_RESET_PASSWORD')) {
      const send = el('button', { type: 'button', id: 'locked-reset' }, 'Send me a reset link')
      send.addEventListener('click', () => $('#forgot').click())
      notice.replaceChildren(
        el(
          'span',
          {},
          'For your safety, this account needs a new password before it can log in again (whoever runs this server ' +
            'locked it, for example after a leak). We can e-mail you a link to choose one. ',
        ),
        send,
      )
      return
    }
    if (error.code === 20013 || error.code === 20011) {
      $('#undelete-title').textContent = error.code === 20013 ? 'Account disabled' : 'Account scheduled for deletion'
      $('#undelete-text').textContent = `${error.message}. You can restore it and log in.`
      return step(undeleteForm)
    }
    throw error
  }
}

function startMfa(mfa: MfaStep<{ requiredActions?: string[] }>) {
  const form = factorForm({ step: mfa, done: finish, onCancel: () => step(loginForm) })
  mfaStep.replaceChildren(form)
  step(mfaStep)
}

loginForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(loginForm, async () => {
    // Empty fields are named here, both at once, before any round trip (UX-T4 finding 6).
    const missing = formErrors({
      login: value(loginForm, 'login') ? undefined : 'Enter your e-mail or phone number.',
      password: value(loginForm, 'password', false) ? undefined : 'Enter your password.',
    })
    if (missing) throw missing
    await logIn(false)
  })
})
undeleteForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(undeleteForm, () => logIn(true))
})

$('#forgot').addEventListener('click', () =>
  submitting(loginForm, async () => {
    notice.textContent = ''
    const login = value(loginForm, 'login')
    if (!login) throw fieldError('login', 'BASE_TYPE_REQUIRED', 'Enter your e-mail or phone number first.')
    const { via } = await client.auth.forgot(login)
    if (via === 'sms') {
      $('#phone-reset-number').textContent = login
      return step(phoneResetForm)
    }
    notice.textContent = login.startsWith('+')
      ? 'This phone number cannot be used to reset your password; a reset link was sent by e-mail'
      : 'If an account uses this address, we sent it a link to reset the password.'
  }),
)

phoneResetForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(
    phoneResetForm,
    async () => {
      const token = await client.auth.verifyPhone(value(loginForm, 'login'), value(phoneResetForm, 'code'))
      location.assign(`/reset#token=${encodeURIComponent(token)}`)
    },
    { 50037: 'code' },
  )
})

// Passkeys: the button runs a modal ceremony; autofill (conditional mediation) waits in the background, and is ended
// when the button starts its own (a browser runs one WebAuthn request at a time).
let autofill: AbortController | undefined

$('#passkey').addEventListener('click', () =>
  submitting(loginForm, async () => {
    // An address WebAuthn refuses (an IP): explain rather than show the browser's own error.
    const unavailable = passkeysUnavailable()
    if (unavailable) throw new Error(unavailable)
    autofill?.abort()
    finish(await client.auth.loginWithPasskey())
  }),
)

async function startAutofill() {
  if (passkeysUnavailable() || !(await browserSupportsWebAuthnAutofill())) return
  autofill = new AbortController()
  try {
    finish(await client.auth.loginWithPasskey({ conditional: true, signal: autofill.signal }))
  } catch (error) {
    // Aborted when the button starts its own ceremony, or dismissed: autofill stays quiet unless the server refused.
    if (error instanceof ApiError && error.status !== 429) showErrors(loginForm, error)
  }
}

async function start() {
  if (client.token) {
    try {
      const me = await client.rest.get('/users/@me')
      if (new URLSearchParams(location.search).has('redirect_to')) return location.replace(redirectTarget())
      $('#signed-in-name').textContent = me.global_name ? `${me.global_name} (${me.username})` : me.username
      show($('#login-card'), false)
      show($('#signed-in'))
      $('#log-out').addEventListener('click', logOut)
      return
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) client.setToken(null)
    }
  }
  // After "Log out" (lib/nav.ts): say so (UX-T4 finding 13).
  if (new URLSearchParams(location.search).has('logged_out')) $('#login-notice').textContent = 'You have logged out.'
  void startAutofill()
  // A phone sent here by a scanned code (redirect_to /ra/…) logs in to approve it: no second code to scan.
  if (new URLSearchParams(location.search).get('redirect_to')?.startsWith('/ra/')) {
    $('#login-notice').textContent = 'Log in on this device to approve the login on your other device.'
    return
  }
  // Beside the form: a QR code a logged-in phone can approve (the desktop side of remote login).
  startQrLogin($('#qr-login'), () => finish({}))
}

void start()
