// /register: e-mail, display name, username (suggested from the display name, checked while typing), password with
// the server's strength meter, date of birth, and the consent checkbox where location metadata asks for it.
import { api, ApiFailure, session } from './lib/api'
import { strengthMeter } from './lib/password'
import { $, debounce, redirectTarget, show, submitting, value } from './lib/ui'

const form = $<HTMLFormElement>('#register-form')
const username = $<HTMLInputElement>('#username')
const globalName = $<HTMLInputElement>('#global_name')
const hint = $('#username-hint')
const consent = $<HTMLInputElement>('#consent')
const promo = $<HTMLInputElement>('#promotional_email_opt_in')
let consentRequired = false
let usernameTyped = false

strengthMeter($<HTMLInputElement>('#password'))

async function locationRules() {
  try {
    const meta = await api<{
      consent_required: boolean
      promotional_email_opt_in: { required: boolean; pre_checked: boolean }
    }>('GET', '/auth/location-metadata', undefined, { anonymous: true })
    consentRequired = meta.consent_required
    show($('#consent-field'), consentRequired)
    consent.required = consentRequired
    promo.checked = meta.promotional_email_opt_in.pre_checked
  } catch {
    // Without the rules the server still checks consent and names the field if it is missing.
  }
}

const suggest = debounce(async () => {
  if (usernameTyped) return
  const query = globalName.value.trim() ? `?global_name=${encodeURIComponent(globalName.value.trim())}` : ''
  try {
    const { username: suggestion } = await api<{ username: string }>(
      'GET',
      `/unique-username/username-suggestions-unauthed${query}`,
      undefined,
      { anonymous: true },
    )
    if (!usernameTyped) {
      username.value = suggestion
      hint.textContent = `Suggested: ${suggestion}. You can change it.`
    }
  } catch {}
})

const checkUsername = debounce(async () => {
  const name = username.value.trim()
  if (!name) return void (hint.textContent = 'Lowercase letters, numbers, _ and periods.')
  try {
    const { taken } = await api<{ taken: boolean | null }>(
      'POST',
      '/unique-username/username-attempt-unauthed',
      { username: name },
      { anonymous: true },
    )
    if (username.value.trim() !== name) return
    hint.textContent =
      taken === null
        ? 'Use 2–32 lowercase letters, numbers, _ and periods.'
        : taken
          ? 'This username is taken.'
          : 'This username is available.'
  } catch {}
})

globalName.addEventListener('input', suggest)
username.addEventListener('input', () => {
  usernameTyped = username.value.trim() !== ''
  checkUsername()
})

form.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(form, async () => {
    // The server needs it; say so beside the field rather than after a round trip.
    if (!value(form, 'date_of_birth'))
      throw new ApiFailure(400, 50035, 'Invalid Form Body', {
        errors: { date_of_birth: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'Enter your date of birth.' }] } },
      })
    const body = {
      email: value(form, 'email'),
      username: value(form, 'username') || undefined,
      global_name: value(form, 'global_name') || null,
      password: value(form, 'password', false),
      date_of_birth: value(form, 'date_of_birth') || undefined,
      consent: consent.checked,
      promotional_email_opt_in: promo.checked,
    }
    const { token } = await api<{ token: string }>('POST', '/auth/register', body, { anonymous: true })
    session.set(token)
    if (new URLSearchParams(location.search).has('redirect_to')) return location.assign(redirectTarget())
    $('#registered-name').textContent = body.global_name ?? body.username ?? ''
    $('#registered-email').textContent = body.email
    show(form, false)
    show($('#registered'))
  })
})

void locationRules()
void suggest()
