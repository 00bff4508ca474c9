// /register: e-mail, display name, username (suggested from the display name, checked while typing), password with
// the server's strength meter, date of birth, and the consent checkbox where location metadata asks for it.
import { ApiError, client } from './lib/client'
import { formErrors } from './lib/errors'
import { logOut } from './lib/nav'
import { PASSWORD_MAX, PASSWORD_MIN, strengthMeter } from './lib/password'
import { $, debounce, el, redirectTarget, show, submitting, value } from './lib/ui'

const form = $<HTMLFormElement>('#register-form')
const username = $<HTMLInputElement>('#username')
const globalName = $<HTMLInputElement>('#global_name')
const hint = $('#username-hint')
const consent = $<HTMLInputElement>('#consent')
const promo = $<HTMLInputElement>('#promotional_email_opt_in')
let consentRequired = false
let usernameTyped = false

strengthMeter($<HTMLInputElement>('#password'))

/**
 * The operator links the Terms and the Privacy Policy (TERMS_URL, PRIVACY_URL); without them the label names texts a
 * person cannot open: say so under it (UX-T4 finding 4) rather than ask for agreement to nothing readable.
 */
function unpublishedTerms() {
  const linked = $('#consent-field label').querySelectorAll('a').length
  if (linked >= 2 || $('#consent-field').querySelector('#consent-hint')) return
  $('#consent-field').append(
    el(
      'p',
      { class: 'hint', id: 'consent-hint' },
      'This server has not published its Terms of Service or Privacy Policy online. Ask whoever runs it before you agree.',
    ),
  )
}

async function locationRules() {
  try {
    const rules = await client.auth.locationMetadata()
    consentRequired = rules.consentRequired
    show($('#consent-field'), consentRequired)
    unpublishedTerms()
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
    // Never under the person's cursor: a suggestion landing while they are in the field would join what they type.
    if (!usernameTyped && document.activeElement !== username) {
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

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * The form's own checks (the server checks again, and adds what only it knows: a taken username, a used e-mail, an
 * age). A missing consent is named with the others here, but alone it is left to the server, whose answer names it
 * together with anything only the server finds.
 */
function mistakes() {
  const email = value(form, 'email')
  const password = value(form, 'password', false)
  const found = {
    email: !email
      ? 'Enter your e-mail address.'
      : EMAIL.test(email)
        ? undefined
        : (['EMAIL_TYPE_INVALID_EMAIL', 'Enter an e-mail address like name@example.com.'] as [string, string]),
    password: !password
      ? 'Enter a password.'
      : password.length < PASSWORD_MIN || password.length > PASSWORD_MAX
        ? (['BASE_TYPE_BAD_LENGTH', `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`] as [string, string])
        : undefined,
    date_of_birth: value(form, 'date_of_birth') ? undefined : 'Enter your date of birth.',
  }
  if (!Object.values(found).some(Boolean)) return null
  return formErrors({
    ...found,
    consent:
      consentRequired && !consent.checked
        ? ['CONSENT_REQUIRED', 'You must agree to the Terms of Service and Privacy Policy.']
        : undefined,
  })
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  const done = await submitting(form, async () => {
    // Everything the page can tell without the server, every field at once (UX-T4 finding 1).
    const checked = mistakes()
    if (checked) throw checked
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
  // A taken username is said once, in red beside the field (UX-T4 finding 3), not also in the grey hint.
  if (!done && username.getAttribute('aria-invalid') === 'true') hint.textContent = ''
})

/** Logged in already: say so (UX-T4 finding 34) rather than a form that would silently replace the session. */
async function signedIn(): Promise<boolean> {
  if (!client.token) return false
  try {
    const me = await client.rest.get('/users/@me')
    $('#signed-in-name').textContent = me.global_name ? `${me.global_name} (${me.username})` : me.username
    show($('#register-card'), false)
    show($('#signed-in'))
    $('#log-out').addEventListener('click', logOut)
    return true
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) client.setToken(null)
    return false
  }
}

void signedIn().then((yes) => {
  if (yes) return
  void locationRules()
  void suggest()
})
