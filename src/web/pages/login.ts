// /login: e-mail or phone + password, then the second factor the account has; the new-location notice; passkeys
// (autofill through conditional mediation, or the button); forgot password by e-mail or text message.
import { browserSupportsWebAuthnAutofill, startAuthentication } from '@simplewebauthn/browser'
import { api, ApiFailure, fieldCodes, session } from './lib/api'
import { factorForm, type MfaChallenge, methodsOfLogin } from './lib/mfa'
import { startQrLogin } from './qr-login'
import { $, passkeysUnavailable, redirectTarget, show, showErrors, submitting, value } from './lib/ui'

type LoginReply = MfaChallenge & { user_id: string; token?: string; required_actions?: string[] }

const loginForm = $<HTMLFormElement>('#login-form')
const undeleteForm = $<HTMLFormElement>('#undelete-form')
const phoneResetForm = $<HTMLFormElement>('#phone-reset-form')
const mfaStep = $('#mfa-step')
const notice = $('#login-notice')
const steps = [loginForm, undeleteForm, phoneResetForm, mfaStep]

function step(visible: HTMLElement) {
  for (const s of steps) show(s, s === visible)
  visible.querySelector<HTMLElement>('input:not([type=radio]), button[type=submit]')?.focus()
}
for (const back of document.querySelectorAll<HTMLButtonElement>('[data-back]'))
  back.addEventListener('click', () => step(loginForm))

/** Logged in: keep the token and go where the person was going. */
function finish(reply: { token?: string; required_actions?: string[] }) {
  if (!reply.token) throw new Error('The server did not return a session.')
  session.set(reply.token)
  location.assign(
    reply.required_actions?.includes('update_password')
      ? '/settings/security?required=update_password'
      : redirectTarget(),
  )
}

async function logIn(undelete: boolean) {
  notice.textContent = ''
  const body = {
    login: value(loginForm, 'login'),
    password: value(loginForm, 'password', false),
    ...(undelete ? { undelete: true } : {}),
  }
  try {
    const reply = await api<LoginReply>('POST', '/auth/login', body, { anonymous: true })
    if (reply.mfa && reply.ticket) return startMfa(reply.ticket, reply)
    finish(reply)
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error
    if (fieldCodes(error, 'login').includes('ACCOUNT_LOGIN_VERIFICATION_EMAIL')) {
      step(loginForm)
      notice.textContent =
        'New login location detected. We sent you an e-mail: open its link to authorize this location, then log in again.'
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

function startMfa(ticket: string, reply: LoginReply) {
  const form = factorForm({
    methods: methodsOfLogin(reply),
    submit: async (type, code) => finish(await api('POST', `/auth/mfa/${type}`, { ticket, code }, { anonymous: true })),
    sendCode: async (type) =>
      (await api<{ phone?: string }>('POST', `/auth/mfa/${type}/send`, { ticket }, { anonymous: true })).phone,
    onCancel: () => step(loginForm),
  })
  mfaStep.replaceChildren(form)
  step(mfaStep)
}

loginForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(loginForm, () => logIn(false))
})
undeleteForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(undeleteForm, () => logIn(true))
})

$('#forgot').addEventListener('click', () =>
  submitting(loginForm, async () => {
    notice.textContent = ''
    const login = value(loginForm, 'login')
    if (!login)
      throw new ApiFailure(400, 50035, 'Invalid Form Body', {
        errors: {
          login: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'Enter your e-mail or phone number first.' }] },
        },
      })
    try {
      await api('POST', '/auth/forgot', { login }, { anonymous: true })
      notice.textContent = 'If an account uses this address, we sent it a link to reset the password.'
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      if (error.code === 70007) {
        $('#phone-reset-number').textContent = login
        return step(phoneResetForm)
      }
      if (error.code === 70009) return void (notice.textContent = error.message)
      throw error
    }
  }),
)

phoneResetForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(
    phoneResetForm,
    async () => {
      const phone = value(loginForm, 'login')
      const { token } = await api<{ token: string }>(
        'POST',
        '/phone-verifications/verify',
        { phone, code: value(phoneResetForm, 'code') },
        { anonymous: true },
      )
      location.assign(`/reset#token=${encodeURIComponent(token)}`)
    },
    { 50037: 'code' },
  )
})

// Passkeys: the button runs a modal ceremony; autofill (conditional mediation) waits in the background.
async function passkeyLogin(autofill: boolean) {
  const { ticket, challenge } = await api<{ ticket: string; challenge: string }>(
    'POST',
    '/auth/conditional/start',
    undefined,
    { anonymous: true },
  )
  const { publicKey } = JSON.parse(challenge)
  const credential = await startAuthentication({ optionsJSON: publicKey, useBrowserAutofill: autofill })
  finish(
    await api(
      'POST',
      '/auth/conditional/finish',
      { ticket, credential: JSON.stringify(credential) },
      { anonymous: true },
    ),
  )
}

$('#passkey').addEventListener('click', () =>
  submitting(loginForm, async () => {
    // An address WebAuthn refuses (an IP): explain rather than show the browser's own error.
    const unavailable = passkeysUnavailable()
    if (unavailable) throw new Error(unavailable)
    return passkeyLogin(false)
  }),
)

async function startAutofill() {
  if (passkeysUnavailable() || !(await browserSupportsWebAuthnAutofill())) return
  try {
    await passkeyLogin(true)
  } catch (error) {
    // Aborted when the button starts its own ceremony, or dismissed: autofill stays quiet unless the server refused.
    if (error instanceof ApiFailure && error.status !== 429) showErrors(loginForm, error)
  }
}

async function start() {
  if (session.token()) {
    try {
      const me = await api<{ username: string; global_name?: string | null }>('GET', '/users/@me')
      if (new URLSearchParams(location.search).has('redirect_to')) return location.replace(redirectTarget())
      $('#signed-in-name').textContent = me.global_name ? `${me.global_name} (${me.username})` : me.username
      show($('#login-card'), false)
      show($('#signed-in'))
      $('#log-out').addEventListener('click', async () => {
        await api('POST', '/auth/logout').catch(() => undefined)
        session.clear()
        location.reload()
      })
      return
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) session.clear()
    }
  }
  void startAutofill()
  // A phone sent here by a scanned code (redirect_to /ra/…) logs in to approve it: no second code to scan.
  if (new URLSearchParams(location.search).get('redirect_to')?.startsWith('/ra/')) {
    $('#login-notice').textContent = 'Log in on this device to approve the login on your other device.'
    return
  }
  // Beside the form: a QR code a logged-in phone can approve (the desktop side of remote login).
  startQrLogin($('#qr-login'), (token) => finish({ token }))
}

void start()
