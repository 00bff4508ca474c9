// /console: the operator console (issue 47). Its own login step for a visitor without a session (password, then the
// second factor); 403 from /admin/@me: not an operator; an operator without MFA is sent to enable it. Every other
// call is elevated: a 60003 opens the factor dialog (lib/factor-form.ts) and the SDK repeats the call. Every string
// that came from a user is put in as text (el() never parses HTML), inside <bdi> so bidi characters stay in their
// box. Sections by the URL's hash (#/dashboard, #/users, #/users/<id>, #/applications/<id>, #/lobbies/<id>,
// #/experiments, #/audit; the other sections are apps.ts, experiments.ts, dashboard.ts); the session token never goes
// in a URL.
import type { RouteResponse } from '../../../../client/src/index'
import { ApiError, client, type MfaStep } from '../lib/client'
import { factorForm, installElevationDialog } from '../lib/factor-form'
import { $, Cancelled, el, show, submitting, value } from '../lib/ui'
import { openApp, openLobby } from './apps'
import { admin, fact, only, text, when } from './common'
import { openDashboard } from './dashboard'
import { openExperiments } from './experiments'

installElevationDialog()

// The answers' shapes are the routes' own (client/src/api.gen.ts, generated from the server's declarations).
type UserSummary = RouteResponse<'get', '/admin/users'>[number]
type UserPage = RouteResponse<'get', '/admin/users/{userId}'>
type AuditRow = RouteResponse<'get', '/admin/audit-log'>[number]

// ---- entering

const loginForm = $<HTMLFormElement>('#login-form')
const mfaStep = $('#mfa-step')

function loginStep() {
  show($('#nav'), false)
  only('login-step')
  show(loginForm, true)
  show(mfaStep, false)
  $<HTMLInputElement>('#login').focus()
}

loginForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(loginForm, async () => {
    const step = await client.auth.login({
      login: value(loginForm, 'login'),
      password: value(loginForm, 'password', false),
    })
    if (!step.mfa) return void enter()
    const mfa = step.mfa as MfaStep<unknown>
    mfaStep.replaceChildren(factorForm({ step: mfa, done: () => void enter(), onCancel: () => loginStep() }))
    show(loginForm, false)
    show(mfaStep, true)
    mfaStep.querySelector<HTMLInputElement>('input:not([type=radio])')?.focus()
  })
})

function refused(title: string, message: string, link: boolean) {
  show($('#nav'), false)
  $('#refused-title').textContent = title
  $('#refused-text').textContent = message
  show($('#refused-link'), link)
  only('refused')
}

async function logOut() {
  try {
    await client.auth.logout()
  } catch {}
  client.setToken(null)
  loginStep()
}
$('#log-out').addEventListener('click', () => void logOut())
$('#refused-log-out').addEventListener('click', () => void logOut())

async function enter() {
  if (!client.token) return loginStep()
  let me: { id: string; username: string; mfa_enabled: boolean }
  try {
    me = await admin('GET', '/@me')
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return loginStep()
    if (error instanceof ApiError && error.status === 403)
      return refused('No access', 'This account is not an operator. An operator is made with `operator grant`.', false)
    throw error
  }
  if (!me.mfa_enabled)
    return refused(
      'Enable two-factor authentication',
      'Console actions need a recent second-factor check. Enable an authenticator app or a security key, then come back.',
      true,
    )
  $('#operator-name').replaceChildren('as ', text(me.username))
  show($('#nav'), true)
  route()
}

// ---- sections

function route() {
  const [, section, id] = location.hash.split('/')
  if (section === 'audit') return void openAudit()
  if (section === 'applications' && id) return void openApp(decodeURIComponent(id))
  if (section === 'applications') return void openApps()
  if (section === 'lobbies' && id) return void openLobby(decodeURIComponent(id))
  if (section === 'experiments') return void openExperiments()
  if (section === 'users' && id) return void openUser(decodeURIComponent(id))
  if (section === 'dashboard') return void openDashboard()
  // The landing section asks nothing of the server (a request there would ask for the second factor at once).
  only('users')
}
window.addEventListener('hashchange', () => {
  if (client.token) route()
})

/** A section's load: a cancelled elevation or a failure goes to the section's form, never unhandled. */
async function loading(form: HTMLElement, work: () => Promise<void>) {
  await submitting(form, work)
}

// ---- users

const searchForm = $<HTMLFormElement>('#search-form')
searchForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(searchForm, async () => {
    const users = await admin<UserSummary[]>('GET', '/users', { query: { query: value(searchForm, 'query') } })
    $('#search-status').textContent = `${users.length} user${users.length === 1 ? '' : 's'} found`
    $('#search-results').replaceChildren(
      ...users.map((u) =>
        el(
          'li',
          {},
          el(
            'span',
            { class: 'what' },
            el('a', { href: `#/users/${encodeURIComponent(u.id)}` }, text(u.username)),
            el('small', {}, text(u.email ?? u.phone ?? ''), ` · ${u.id}`),
          ),
          u.locked ? el('span', { class: 'badge locked' }, 'locked') : null,
          u.state !== 'active' ? el('span', { class: 'badge' }, u.state) : null,
          u.bot ? el('span', { class: 'badge' }, 'bot') : null,
        ),
      ),
    )
  })
})

const actionForm = $<HTMLFormElement>('#action-form')
let current: UserPage | undefined

function renderUser(page: UserPage) {
  current = page
  const u = page.user
  // Each string in a box of its own: a right-to-left override in the display name cannot reverse the username.
  $('#user-title').replaceChildren(
    ...(u.global_name ? [text(u.global_name), ' (', text(u.username), ')'] : [text(u.username)]),
  )
  $('#user-facts').replaceChildren(
    ...fact('Id', u.id),
    ...fact('Username', text(u.username)),
    ...fact('E-mail', text(u.email ?? '—'), u.email ? (u.email_verified ? ' (verified)' : ' (not verified)') : ''),
    ...fact('Phone', text(u.phone ?? '—')),
    ...fact('State', u.locked ? 'locked' : u.state, u.bot ? ' · bot' : '', page.operator ? ' · operator' : ''),
    ...fact('Second factors', page.mfa.enabled ? page.mfa.factors.join(', ') : 'none'),
    ...fact('Created', when(u.created_at)),
  )
  const act = (label: string, run: () => Promise<unknown>, danger = false) =>
    el(
      'button',
      {
        type: 'button',
        class: danger ? 'danger' : 'secondary',
        onclick: () =>
          void submitting(actionForm, async () => {
            await run()
            $('#user-notice').textContent = `${label}: done.`
            await openUser(u.id, false)
          }),
      },
      label,
    )
  const reason = () => value(actionForm, 'reason')
  const post = (path: string, body: object = {}) =>
    admin('POST', `/users/${u.id}/${path}`, { body: { reason: reason() || undefined, ...body } })
  $('#user-actions').replaceChildren(
    u.locked ? act('Unlock', () => post('unlock')) : act('Lock', () => post('lock'), true),
    act('Log out all sessions', () => post('logout')),
    page.mfa.enabled ? act('Remove MFA', () => post('mfa/remove'), true) : '',
    u.email && !u.email_verified ? act('Resend verification', () => post('verification/resend')) : '',
    u.state === 'active'
      ? act(
          'Delete',
          async () => {
            // Typed confirmation: the username, as shown.
            const typed = window.prompt(`Type the username (${u.username}) to delete this account`)
            if (typed !== u.username) throw new Cancelled('not confirmed')
            await post('delete')
          },
          true,
        )
      : '',
  )
  $('#user-sessions').replaceChildren(
    ...(page.sessions.length
      ? page.sessions.map((s) =>
          el(
            'li',
            {},
            el(
              'span',
              { class: 'what' },
              text([s.client_info.os, s.client_info.platform].filter(Boolean).join(' · ') || 'unknown client'),
              el(
                'small',
                {},
                text(s.client_info.location ?? 'unknown location'),
                ' · last used ',
                when(s.approx_last_used_time),
              ),
            ),
            act('Log out', () => post('logout', { session_id_hashes: [s.id_hash] })),
          ),
        )
      : [el('li', { class: 'muted' }, 'No sessions.')]),
  )
  const links = [
    ...page.lobbies.map((l) =>
      el('li', {}, el('span', { class: 'what' }, `Lobby ${l.id}`, el('small', {}, `application ${l.application_id}`))),
    ),
    ...page.guilds.map((g) =>
      el('li', {}, el('span', { class: 'what' }, 'Guild ', text(g.name), el('small', {}, g.id))),
    ),
    ...page.oauth2_grants.map((g) =>
      el(
        'li',
        {},
        el(
          'span',
          { class: 'what' },
          'Grant to ',
          text(g.application_name ?? g.application_id),
          el('small', {}, g.scopes.join(' ')),
        ),
      ),
    ),
  ]
  $('#user-links').replaceChildren(...(links.length ? links : [el('li', { class: 'muted' }, 'None.')]))
}

async function openUser(id: string, fresh = true) {
  if (fresh) {
    $('#user-notice').textContent = ''
    actionForm.reset()
  }
  only('user')
  if (current?.user.id !== id) $('#user-title').textContent = 'Loading…'
  await loading(actionForm, async () => renderUser(await admin<UserPage>('GET', `/users/${encodeURIComponent(id)}`)))
}

// ---- applications

type App = RouteResponse<'get', '/admin/applications'>[number]
const appForm = $<HTMLFormElement>('#app-form')

async function loadApps() {
  const apps = await admin<App[]>('GET', '/applications')
  $('#app-rows').replaceChildren(
    ...(apps.length
      ? apps.map((a) =>
          el(
            'li',
            {},
            el(
              'span',
              { class: 'what' },
              el('strong', {}, el('a', { href: `#/applications/${encodeURIComponent(a.id)}` }, text(a.name))),
              el('small', {}, a.id, ' · bot ', a.bot_user_id),
              a.redirect_uris.length ? el('small', {}, text(a.redirect_uris.join(' '))) : '',
              a.event_webhooks_url ? el('small', {}, 'Event webhooks: ', text(a.event_webhooks_url)) : '',
            ),
          ),
        )
      : [el('li', { class: 'muted' }, 'No applications yet.')]),
  )
}

async function openApps() {
  only('applications')
  await loading(appForm, loadApps)
}

appForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(appForm, async () => {
    const redirects = $<HTMLTextAreaElement>('#app-redirects').value.split(/\s+/).filter(Boolean)
    const created = await admin<{ id: string; bot_token: string; client_secret: string }>('POST', '/applications', {
      body: { name: value(appForm, 'name'), redirect_uris: redirects },
    })
    $('#app-secrets').replaceChildren(
      ...fact('Id', created.id),
      ...fact('Bot token', el('code', { class: 'secret' }, created.bot_token)),
      ...fact('Client secret', el('code', { class: 'secret' }, created.client_secret)),
    )
    show($('#app-created'), true)
    appForm.reset()
    await loadApps()
  })
})

// ---- audit log

const auditForm = $<HTMLFormElement>('#audit-form')
let oldest: string | undefined

function auditRow(r: AuditRow) {
  return el(
    'li',
    {},
    el(
      'span',
      { class: 'what' },
      el('strong', {}, r.action),
      el(
        'small',
        {},
        when(r.created_at),
        ' · by ',
        text(r.actor.name),
        r.address ? ` from ${r.address}` : '',
        r.target_id ? ` · on ${r.target_type ?? ''} ${r.target_id}` : '',
      ),
      r.reason ? el('small', {}, 'Reason: ', text(r.reason)) : '',
    ),
  )
}

async function loadAudit(more: boolean) {
  const rows = await admin<AuditRow[]>('GET', '/audit-log', {
    query: {
      action: value(auditForm, 'action') || undefined,
      target_id: value(auditForm, 'target_id') || undefined,
      before: more ? oldest : undefined,
      limit: '50',
    },
  })
  const list = $('#audit-rows')
  if (!more) list.replaceChildren()
  list.append(...rows.map(auditRow))
  if (!more && !rows.length) list.append(el('li', { class: 'muted' }, 'No rows.'))
  oldest = rows.at(-1)?.id
  show($('#audit-more'), rows.length === 50)
}

async function openAudit() {
  only('audit')
  await loading(auditForm, () => loadAudit(false))
}
auditForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(auditForm, () => loadAudit(false))
})
$('#audit-more').addEventListener('click', () => void submitting(auditForm, () => loadAudit(true)))

void enter()
