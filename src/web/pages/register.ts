// /register: e-mail, display name, username (suggested from the display name, checked while typing), password with
// the server's strength meter, date of birth, and the consent checkbox where location metadata asks for it.
import { client } from './lib/client'
import { fieldError } from './lib/errors'
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
    const rules = await client.auth.locationMetadata()
    consentRequired = rules.consentRequired
    show($('#consent-field'), consentRequired)
    consent.required = consentRequired
    promo.checked = rules.promotionalEmailOptIn.preChecked
  } catch {
    // Without the rules the server still checks consent and names the field if it is missing.
  }
}

const suggest = debounce(async () => {
  if (usernameTyped) return
  const name = globalName.value.trim()
  try {
    const { username: suggestion } = await client.rest.get('/unique-username/username-suggestions-unauthed', {
      query: name ? { global_name: name } : {},
      auth: false,
    })
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
    const { taken } = await client.rest.post('/unique-username/username-attempt-unauthed', {
      body: { username: name },
      auth: false,
    })
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
      throw fieldError('date_of_birth', 'BASE_TYPE_REQUIRED', 'Enter your date of birth.')
    const account = {
      email: value(form, 'email'),
      username: value(form, 'username') || undefined,
      globalName: value(form, 'global_name') || undefined,
      password: value(form, 'password', false),
      dateOfBirth: value(form, 'date_of_birth') || undefined,
      consent: consent.checked,
      promotionalEmailOptIn: promo.checked,
    }
    await client.auth.register(account)
    if (new URLSearchParams(location.search).has('redirect_to')) return location.assign(redirectTarget())
    $('#registered-name').textContent = account.globalName ?? account.username ?? ''
    $('#registered-email').textContent = account.email
    show(form, false)
    show($('#registered'))
  })
})

void locationRules()
void suggest()
