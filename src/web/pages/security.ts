// /settings/security: password, e-mail, a section per second factor (each built by its factor's page.ts, in the
// registry's order; the backup codes' display is the page's, shared by them), sessions. Sensitive requests answer
// 60003; the elevation dialog proves a factor and the SDK repeats them.
import { siteNav } from './lib/nav'
import type { BackupCode, SettingsPage, SettingsUser } from '../../mfa/factor-page'
import { FACTOR_PAGES } from '../../mfa/factors/pages'
import { ApiError, client } from './lib/client'
import { fieldError } from './lib/errors'
import { installElevationDialog, methodTypes } from './lib/factor-form'
import { strengthMeter } from './lib/password'
import { $, Cancelled, download, el, field, goLogin, passkeysUnavailable, show, submitting, value } from './lib/ui'

type Me = SettingsUser & { id: string; global_name: string | null; verified: boolean }
type AuthSession = {
  id_hash: string
  approx_last_used_time: string
  client_info: { os: string | null; platform: string | null; location: string | null }
}

let me: Me
const notice = $('#notice')

installElevationDialog()

function say(message: string) {
  notice.textContent = message
  notice.scrollIntoView({ block: 'nearest' })
}

/**
 * A new token replaces this session's (after a password or MFA change); keep it. The change logged the other sessions
 * out: the list says so at once (UX-T4 finding 9), not after a reload.
 */
function keepToken(reply: { token?: string } | undefined) {
  if (!reply?.token) return
  client.setToken(reply.token)
  void loadSessions().catch(() => undefined)
}

async function loadMe() {
  me = (await client.rest.get('/users/@me')) as Me
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
      await client.rest.patch('/users/@me', {
        body: {
          password: value(passwordForm, 'password', false),
          new_password: value(passwordForm, 'new_password', false),
        },
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
    await client.rest.patch('/users/@me', {
      body: { email: value(emailForm, 'email'), password: value(emailForm, 'password', false) },
    })
    emailForm.reset()
    await loadMe()
    say(`E-mail changed to ${me.email}.${previous ? ` A link to undo this was sent to ${previous}.` : ''}`)
  })
})
$('#resend-verification').addEventListener('click', () =>
  submitting(emailForm, async () => {
    await client.rest.post('/auth/verify/resend')
    say(`We sent a new verification link to ${me.email}.`)
  }),
)

// ---- second factors: each factor's section (its page.ts), in the registry's order

let shownCodes: readonly BackupCode[] = []
const codesNote = el('p', { class: 'notice', id: 'backup-note', tabindex: -1 })
const codesList = el('ol', { class: 'codes', id: 'backup-list' })
const codesDownload = el('button', { type: 'button', id: 'backup-download' }, 'Download')
codesDownload.addEventListener('click', () =>
  download(
    `${location.host}-backup-codes.txt`,
    `Backup codes for ${me.email ?? me.username} at ${location.host}\n\n${shownCodes.map((c) => c.code).join('\n')}\n`,
  ),
)
/** Backup codes as an enrolment or the backup section shows them: in clear and downloadable only when just made. */
const backupCodes = {
  element: el(
    'div',
    { id: 'backup-codes', hidden: true, 'aria-live': 'polite' },
    codesNote,
    codesList,
    el('div', { class: 'actions' }, codesDownload),
  ),
  show(codes: readonly BackupCode[], fresh: boolean) {
    shownCodes = codes
    codesNote.textContent = fresh
      ? 'Save these codes now: they are shown only this once. Each works one time.'
      : 'The codes themselves are only shown when they are made. Generate new codes to see them again.'
    codesList.replaceChildren(...codes.map((c) => el('li', { class: c.consumed ? 'used' : '' }, c.code)))
    show(codesDownload, fresh)
    show(backupCodes.element)
    // New codes are shown only this once, maybe far down the page: take the person to them (UX-T4 finding 10),
    // after whatever the section says at the top.
    if (fresh)
      setTimeout(() => {
        codesNote.focus()
        codesNote.scrollIntoView({ block: 'center' })
      })
  },
}

const settingsPage: SettingsPage = {
  api: (method, path, body) => client.rest.request(method, path, { body }),
  codeOf: (error) => (error instanceof ApiError ? error.code : undefined),
  fieldError: (name, message) => fieldError(name, 'BASE_TYPE_REQUIRED', message),
  el,
  section: (name, title, ...children) =>
    el(
      'section',
      { id: `${name}-section`, 'aria-labelledby': `${name}-title` },
      el('h2', { id: `${name}-title` }, title),
      ...children,
    ),
  field,
  show,
  submitting,
  value,
  passkeysUnavailable,
  user: () => me,
  say,
  keepToken,
  refresh: async () => {
    await loadMe()
    renderAll()
  },
  backupCodes,
}

const pagesByType = new Map(FACTOR_PAGES.map((p) => [p.type, p]))
const factorSections = methodTypes().flatMap((type) => {
  const factor = pagesByType.get(type)
  if (!factor) return []
  const section = factor.section(settingsPage)
  section.element.dataset.factor = type
  return [section]
})
$('#sessions-section').before(...factorSections.map((s) => s.element))

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

type AuthorizedApp = { id: string; scopes: string[]; application: { name: string }; first_party?: boolean }

/** GET /oauth2/tokens: the apps with access (UX-T4 finding 25); this web app itself marked, the others removable. */
async function loadApps() {
  const apps = (await client.rest.get('/oauth2/tokens')) as AuthorizedApp[]
  $('#apps').replaceChildren(
    ...apps.map((a) =>
      el(
        'li',
        { 'data-app': a.application.name, ...(a.first_party ? { 'data-first-party': 'true' } : {}) },
        el(
          'span',
          { class: 'what' },
          el('span', { class: 'name' }, a.first_party ? 'This web app' : a.application.name),
          el(
            'small',
            {},
            a.first_party
              ? 'Your lobbies, chat and friends on this site; it logs out with your session.'
              : a.scopes.join(', '),
          ),
        ),
        a.first_party
          ? null
          : el(
              'button',
              {
                type: 'button',
                class: 'secondary',
                onclick: async () => {
                  try {
                    await client.rest.delete(`/oauth2/tokens/${a.id}`)
                    await loadApps()
                  } catch (error) {
                    $('#apps-error').textContent = error instanceof Error ? error.message : String(error)
                  }
                },
              },
              'Remove',
            ),
      ),
    ),
  )
  show($('#no-apps'), apps.length === 0)
}

async function loadSessions() {
  const [{ user_sessions }, hash] = await Promise.all([
    client.rest.get('/auth/sessions'),
    client.auth.currentSessionHash(),
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
    await client.auth.logoutSessions(hashes)
    say(hashes.length === 1 ? 'Session logged out.' : `${hashes.length} sessions logged out.`)
    await loadSessions()
  } catch (error) {
    if (!(error instanceof Cancelled))
      $('#sessions-error').textContent = error instanceof Error ? error.message : String(error)
  }
}

$('#sessions-others').addEventListener('click', async () => {
  const { user_sessions } = await client.rest.get('/auth/sessions')
  const others = user_sessions.map((s) => s.id_hash).filter((h) => h !== currentHash)
  if (others.length) await logOutSessions(others.slice(0, 64))
})

// ---- the page

function renderAll() {
  for (const section of factorSections) section.render()
}

async function start() {
  if (!client.token) goLogin()
  siteNav('settings')
  try {
    await loadMe()
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      client.setToken(null)
      goLogin()
    }
    throw error
  }
  for (const section of factorSections) await section.load?.()
  if (new URLSearchParams(location.search).get('required') === 'update_password') {
    say('Your password does not meet the current rules. Choose a new one below.')
  }
  renderAll()
  show($('#settings'))
  await loadSessions()
  await loadApps().catch((error) => {
    $('#apps-error').textContent = error instanceof Error ? error.message : String(error)
  })
}

void start().catch((error) => {
  if (error instanceof Cancelled) return
  show($('#settings'))
  say(error instanceof Error ? error.message : String(error))
})
