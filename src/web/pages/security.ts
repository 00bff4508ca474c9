// /settings/security: password, e-mail, authenticator app (QR of the otpauth:// URI), security keys and passkeys,
// backup codes (shown once, downloadable), SMS and phone, sessions. Sensitive requests answer 60003; the elevation
// dialog proves a factor and api() repeats them.
import { startRegistration } from '@simplewebauthn/browser'
import { Secret, TOTP } from 'otpauth'
import { toString as qrSvg } from 'qrcode/lib/browser.js'
import { api, ApiFailure, session } from './lib/api'
import { currentSessionHash } from './lib/gateway'
import { installElevationDialog } from './lib/mfa'
import { strengthMeter } from './lib/password'
import { $, Cancelled, download, el, goLogin, passkeysUnavailable, show, submitting, value } from './lib/ui'

type Me = {
  id: string
  username: string
  global_name: string | null
  email: string | null
  verified: boolean
  phone: string | null
  mfa_enabled: boolean
  /** Discord's authenticator types on: 1 security key or passkey, 2 authenticator app (TOTP), 3 SMS. */
  authenticator_types?: number[]
}
const TOTP_ON = 2
const SMS_ON = 3
type Key = { id: string; name: string; type: number }
type BackupCode = { code: string; consumed: boolean }
type AuthSession = {
  id_hash: string
  approx_last_used_time: string
  client_info: { os: string | null; platform: string | null; location: string | null }
}

let me: Me
let keys: Key[] = []
const notice = $('#notice')

installElevationDialog()

function say(message: string) {
  notice.textContent = message
  notice.scrollIntoView({ block: 'nearest' })
}

/** A new token replaces this session's (after a password or MFA change); keep it. */
function keepToken(reply: { token?: string } | undefined) {
  if (reply?.token) session.set(reply.token)
}

async function loadMe() {
  me = await api<Me>('GET', '/users/@me')
  $('#me-name').textContent = me.global_name ? `${me.global_name} (${me.username})` : me.username
  $('#me-email').textContent = me.email ?? 'no e-mail'
  $('#me-verified').textContent = me.email ? (me.verified ? 'verified' : 'not verified') : ''
  show($('#resend-verification'), !!me.email && !me.verified)
}

// ---- password and e-mail

const passwordForm = $<HTMLFormElement>('#password-form')
strengthMeter($<HTMLInputElement>('#new-password'))
passwordForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(passwordForm, async () => {
    keepToken(
      await api('PATCH', '/users/@me', {
        password: value(passwordForm, 'password', false),
        new_password: value(passwordForm, 'new_password', false),
      }),
    )
    passwordForm.reset()
    say('Password changed. Your other sessions were logged out.')
    await loadSessions()
  })
})

const emailForm = $<HTMLFormElement>('#email-form')
emailForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(emailForm, async () => {
    const previous = me.email
    await api('PATCH', '/users/@me', {
      email: value(emailForm, 'email'),
      password: value(emailForm, 'password', false),
    })
    emailForm.reset()
    await loadMe()
    say(`E-mail changed to ${me.email}.${previous ? ` A link to undo this was sent to ${previous}.` : ''}`)
  })
})
$('#resend-verification').addEventListener('click', () =>
  submitting(emailForm, async () => {
    await api('POST', '/auth/verify/resend')
    say(`We sent a new verification link to ${me.email}.`)
  }),
)

// ---- authenticator app

const totpForm = $<HTMLFormElement>('#totp-form')
let pendingSecret: Secret | undefined

const factorOn = (type: number) => me.authenticator_types?.includes(type) ?? false

/** Only the action the state allows: enable when off, remove when on, and a sentence saying which it is. */
function renderTotp() {
  const on = factorOn(TOTP_ON)
  $('#totp-state').textContent = on ? 'On: logins ask for a code from your app.' : 'Off.'
  $('#totp-section').dataset.state = on ? 'on' : 'off'
  show($('#totp-start'), !on && totpForm.hidden)
  show($('#totp-remove'), on)
}

$('#totp-start').addEventListener('click', async () => {
  pendingSecret = new Secret({ size: 20 })
  const uri = new TOTP({
    issuer: location.host,
    label: me.email ?? me.username,
    secret: pendingSecret,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  }).toString()
  const svg = new DOMParser().parseFromString(
    await qrSvg(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
    'image/svg+xml',
  ).documentElement
  $('#totp-qr').replaceChildren(document.importNode(svg, true))
  $('#totp-secret').textContent = pendingSecret.base32.replace(/(.{4})/g, '$1 ').trim()
  show(totpForm)
  show($('#totp-start'), false)
  $('#totp-code').focus()
})
$('#totp-cancel').addEventListener('click', () => {
  pendingSecret = undefined
  totpForm.reset()
  show(totpForm, false)
  renderTotp()
})
totpForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(
    totpForm,
    async () => {
      const reply = await api<{ token: string; backup_codes: BackupCode[] }>('POST', '/users/@me/mfa/totp/enable', {
        secret: pendingSecret!.base32,
        code: value(totpForm, 'code').replace(/\s+/g, ''),
        password: value(totpForm, 'password', false),
      })
      keepToken(reply)
      totpForm.reset()
      show(totpForm, false)
      await loadMe()
      showBackupCodes(reply.backup_codes, true)
      say('Authenticator app turned on. Your other sessions were logged out.')
      renderAll()
    },
    { 60001: 'code', 60005: 'code', 60008: 'code' },
  )
})
$('#totp-remove').addEventListener('click', () =>
  submitting($('#totp-section'), async () => {
    try {
      keepToken(await api('POST', '/users/@me/mfa/totp/disable'))
    } catch (error) {
      // Removed meanwhile (another tab): show the state as it is.
      if (error instanceof ApiFailure && error.code === 60002) {
        await loadMe()
        renderAll()
      }
      throw error
    }
    await loadMe()
    say('Authenticator app removed.')
    renderAll()
  }),
)

// ---- security keys and passkeys

const keyForm = $<HTMLFormElement>('#key-form')
// On an address where WebAuthn cannot work (an IP), say so instead of letting the browser fail with its own error.
const keysUnavailable = passkeysUnavailable()
if (keysUnavailable) {
  $('#keys-unavailable').textContent = keysUnavailable
  show($('#keys-unavailable'))
  for (const control of keyForm.querySelectorAll<HTMLInputElement | HTMLButtonElement>('input, button'))
    control.disabled = true
}

function renderKeys() {
  const list = $('#keys')
  if (!keys.length) return list.replaceChildren(el('li', { class: 'muted' }, 'No security key or passkey yet.'))
  list.replaceChildren(
    ...keys.map((key) => {
      const name = el('input', {
        type: 'text',
        value: key.name,
        maxlength: 32,
        'aria-label': `Name of ${key.name}`,
        name: 'name',
        id: `key-${key.id}-name`,
      })
      const row = el('form', { class: 'what', novalidate: true }, el('div', { class: 'field' }, name))
      row.addEventListener('submit', (event) => {
        event.preventDefault()
        void submitting(row, async () => {
          const renamed = await api<Key>('PATCH', `/users/@me/mfa/webauthn/credentials/${key.id}`, {
            name: name.value.trim(),
          })
          key.name = renamed.name
          say(`Renamed to ${renamed.name}.`)
        })
      })
      row.append(
        el(
          'div',
          { class: 'actions' },
          el('button', { type: 'submit', class: 'secondary' }, 'Rename'),
          el('button', { type: 'button', class: 'danger', onclick: () => removeKey(key, row) }, 'Remove'),
        ),
      )
      return el('li', { 'data-key': key.name }, row)
    }),
  )
}

function removeKey(key: Key, row: HTMLElement) {
  void submitting(row, async () => {
    await api('DELETE', `/users/@me/mfa/webauthn/credentials/${key.id}`)
    await loadKeys()
    await loadMe()
    say(`${key.name} removed.`)
    renderAll()
  })
}

async function loadKeys() {
  keys = await api<Key[]>('GET', '/users/@me/mfa/webauthn/credentials')
}

keyForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(keyForm, async () => {
    const name = value(keyForm, 'name')
    if (!name)
      throw new ApiFailure(400, 50035, 'Invalid Form Body', {
        errors: { name: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'Give the key a name.' }] } },
      })
    const { ticket, challenge } = await api<{ ticket: string; challenge: string }>(
      'POST',
      '/users/@me/mfa/webauthn/credentials',
    )
    const credential = await startRegistration({ optionsJSON: JSON.parse(challenge).publicKey })
    const created = await api<Key & { backup_codes?: BackupCode[] }>('POST', '/users/@me/mfa/webauthn/credentials', {
      ticket,
      name,
      credential: JSON.stringify(credential),
    })
    keyForm.reset()
    await loadKeys()
    await loadMe()
    if (created.backup_codes) showBackupCodes(created.backup_codes, true)
    say(`${created.name} added.`)
    renderAll()
  })
})

// ---- backup codes

let shownCodes: BackupCode[] = []

function showBackupCodes(codes: BackupCode[], fresh: boolean) {
  shownCodes = codes
  $('#backup-note').textContent = fresh
    ? 'Save these codes now: they are shown only this once. Each works one time.'
    : 'The codes themselves are only shown when they are made. Generate new codes to see them again.'
  $('#backup-list').replaceChildren(...codes.map((c) => el('li', { class: c.consumed ? 'used' : '' }, c.code)))
  show($('#backup-download'), fresh)
  show($('#backup-codes'))
}

async function backupCodes(regenerate: boolean) {
  $('#backup-error').textContent = ''
  try {
    const { backup_codes } = await api<{ backup_codes: BackupCode[] }>('POST', '/users/@me/mfa/codes-verification', {
      regenerate,
    })
    showBackupCodes(backup_codes, regenerate)
  } catch (error) {
    if (!(error instanceof Cancelled))
      $('#backup-error').textContent = error instanceof Error ? error.message : String(error)
  }
}
$('#backup-view').addEventListener('click', () => backupCodes(false))
$('#backup-new').addEventListener('click', () => backupCodes(true))
$('#backup-download').addEventListener('click', () =>
  download(
    `${location.host}-backup-codes.txt`,
    `Backup codes for ${me.email ?? me.username} at ${location.host}\n\n${shownCodes.map((c) => c.code).join('\n')}\n`,
  ),
)

// ---- SMS and phone

const smsForm = $<HTMLFormElement>('#sms-form')
const phoneForm = $<HTMLFormElement>('#phone-form')
let phoneStep: 'send' | 'verify' | 'save' = 'send'
let phoneToken = ''

function renderSms() {
  const hasPhone = !!me.phone
  const on = factorOn(SMS_ON)
  $('#sms-state').textContent = on
    ? `On: text messages to ${me.phone} can stand in for your authenticator.`
    : !hasPhone
      ? 'Off. Add a phone number to use text messages.'
      : me.mfa_enabled
        ? `Off. Turn it on to receive codes at ${me.phone}.`
        : `Off. Phone ${me.phone}. Text messages can be turned on once an authenticator app or a security key is set up.`
  $('#sms-section').dataset.state = on ? 'on' : 'off'
  show(smsForm, on || (hasPhone && me.mfa_enabled))
  show($('#sms-on'), !on)
  show($('#sms-off'), on)
  show(phoneForm, !hasPhone)
}

smsForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const action = factorOn(SMS_ON) ? 'disable' : 'enable'
  void submitting(smsForm, async () => {
    await api('POST', `/users/@me/mfa/sms/${action}`, { password: value(smsForm, 'password', false) })
    smsForm.reset()
    await loadMe()
    say(action === 'enable' ? 'Text-message codes turned on.' : 'Text-message codes turned off.')
    renderAll()
  })
})

phoneForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(
    phoneForm,
    async () => {
      const phone = value(phoneForm, 'phone')
      if (phoneStep === 'send') {
        await api('POST', '/users/@me/phone', { phone })
        phoneStep = 'verify'
        show($('#phone-code-field'))
        $('#phone-submit').textContent = 'Verify the code'
        $('#phone-code').focus()
      } else if (phoneStep === 'verify') {
        phoneToken = (
          await api<{ token: string }>('POST', '/phone-verifications/verify', { phone, code: value(phoneForm, 'code') })
        ).token
        phoneStep = 'save'
        show($('#phone-code-field'), false)
        show($('#phone-password-field'))
        $('#phone-submit').textContent = 'Add phone number'
        $('#phone-password').focus()
      } else {
        await api('POST', '/users/@me/phone', {
          phone_token: phoneToken,
          password: value(phoneForm, 'password', false),
        })
        phoneStep = 'send'
        phoneForm.reset()
        show($('#phone-password-field'), false)
        $('#phone-submit').textContent = 'Send a code'
        await loadMe()
        say('Phone number added.')
        renderAll()
      }
    },
    { 50037: 'code' },
  )
})

// ---- sessions

let currentHash: string | null = null

/** "Chrome on Linux", "Linux", "Chrome", or "Unknown client": what the session's client said it is. */
function clientOf(s: AuthSession): string {
  const { os, platform } = s.client_info
  if (platform && os) return `${platform} on ${os}`
  return platform || os || 'Unknown client'
}

/** The session's approximate place; the server says "Unknown" (or nothing) for addresses it cannot place (a LAN). */
function locationOf(s: AuthSession): string {
  const place = s.client_info.location?.trim()
  return place && place.toLowerCase() !== 'unknown' ? place : 'Unknown location'
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

/** "Last used 5 minutes ago (<date and time>)": the server updates it at most once a minute. */
function lastUsed(iso: string): string {
  const at = new Date(iso)
  const minutes = Math.round((at.getTime() - Date.now()) / 60_000)
  const ago =
    Math.abs(minutes) < 2
      ? 'just now'
      : Math.abs(minutes) < 60
        ? relative.format(minutes, 'minute')
        : Math.abs(minutes) < 48 * 60
          ? relative.format(Math.round(minutes / 60), 'hour')
          : relative.format(Math.round(minutes / 1440), 'day')
  return `Last used ${ago} (${at.toLocaleString()})`
}

async function loadSessions() {
  const [{ user_sessions }, hash] = await Promise.all([
    api<{ user_sessions: AuthSession[] }>('GET', '/auth/sessions'),
    currentSessionHash(),
  ])
  currentHash = hash
  const others = user_sessions.filter((s) => s.id_hash !== currentHash)
  // This device first, then the most recently used.
  const sorted = [...user_sessions].sort(
    (a, b) => Number(b.id_hash === currentHash) - Number(a.id_hash === currentHash),
  )
  $('#sessions').replaceChildren(
    ...sorted.map((s) => {
      const mine = s.id_hash === currentHash
      return el(
        'li',
        { 'data-session': s.id_hash, 'data-current': String(mine) },
        el(
          'div',
          { class: 'what' },
          el('span', { class: 'client' }, clientOf(s), mine ? el('span', { class: 'badge' }, 'this device') : null),
          el('small', { class: 'location' }, locationOf(s)),
          el('small', { class: 'last-used' }, lastUsed(s.approx_last_used_time)),
        ),
        mine
          ? null
          : el('button', { type: 'button', class: 'secondary', onclick: () => logOutSessions([s.id_hash]) }, 'Log out'),
      )
    }),
  )
  // Without READY's hash this browser's own session cannot be told apart: "all others" would include it.
  show($('#sessions-others'), currentHash !== null && others.length > 0)
}

async function logOutSessions(hashes: string[]) {
  $('#sessions-error').textContent = ''
  try {
    await api('POST', '/auth/sessions/logout', { session_id_hashes: hashes })
    say(hashes.length === 1 ? 'Session logged out.' : `${hashes.length} sessions logged out.`)
    await loadSessions()
  } catch (error) {
    if (!(error instanceof Cancelled))
      $('#sessions-error').textContent = error instanceof Error ? error.message : String(error)
  }
}

$('#sessions-others').addEventListener('click', async () => {
  const { user_sessions } = await api<{ user_sessions: AuthSession[] }>('GET', '/auth/sessions')
  const others = user_sessions.map((s) => s.id_hash).filter((h) => h !== currentHash)
  if (others.length) await logOutSessions(others.slice(0, 64))
})

// ---- the page

$('#log-out').addEventListener('click', async () => {
  await api('POST', '/auth/logout').catch(() => undefined)
  session.clear()
  location.assign('/login')
})

function renderAll() {
  renderTotp()
  renderKeys()
  renderSms()
  show($('#backup-section'), me.mfa_enabled)
}

async function start() {
  if (!session.token()) goLogin()
  try {
    await loadMe()
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) {
      session.clear()
      goLogin()
    }
    throw error
  }
  await loadKeys()
  if (new URLSearchParams(location.search).get('required') === 'update_password') {
    say('Your password does not meet the current rules. Choose a new one below.')
  }
  renderAll()
  show($('#settings'))
  await loadSessions()
}

void start().catch((error) => {
  if (error instanceof Cancelled) return
  show($('#settings'))
  say(error instanceof Error ? error.message : String(error))
})
