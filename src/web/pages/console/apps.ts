// The console's application page (#/applications/<id>): a new bot token or client secret (the name typed to
// confirm, the new one shown once), the event webhooks URL with a test PING and its answer, the delivery log, the
// application's live lobbies (paged); and a lobby's page (#/lobbies/<id>): metadata, members (online, in the call),
// the last messages with their moderation metadata, remove a member, close the lobby. Strings as text, isolated.
import type { RouteResponse } from '../../../../client/src/index'
import { $, Cancelled, el, show, submitting, value } from '../lib/ui'
import { admin, fact, only, pairs, text, when } from './common'

type App = RouteResponse<'get', '/admin/applications'>[number]
type Deliveries = RouteResponse<'get', '/admin/applications/{appId}/event-deliveries'>
type Lobbies = RouteResponse<'get', '/admin/applications/{appId}/lobbies'>
type LobbyPage = RouteResponse<'get', '/admin/lobbies/{lobbyId}'>
type Ping = RouteResponse<'post', '/admin/applications/{appId}/event-webhooks/ping'>

const rotateForm = $<HTMLFormElement>('#rotate-form')
const webhookForm = $<HTMLFormElement>('#webhook-form')
const lobbiesForm = $<HTMLFormElement>('#lobbies-form')
const lobbyForm = $<HTMLFormElement>('#lobby-form')
let app: App | undefined
let oldestLobby: string | undefined

const STATUS: Record<number, string> = { 1: 'off', 2: 'on', 3: 'turned off by the server after failures' }

function renderApp(a: App) {
  app = a
  $('#app-title').replaceChildren(text(a.name))
  $('#app-facts').replaceChildren(
    ...fact('Id', a.id),
    ...fact('Bot user', a.bot_user_id),
    ...fact('Redirect URIs', ...(a.redirect_uris.length ? [text(a.redirect_uris.join(' '))] : ['—'])),
    ...fact('Event webhooks', STATUS[a.event_webhooks_status] ?? String(a.event_webhooks_status)),
    ...fact('Created', when(a.created_at)),
  )
  $<HTMLInputElement>('#webhook-url').value = a.event_webhooks_url ?? ''
}

async function loadDeliveries(id: string) {
  const rows = await admin<Deliveries>('GET', `/applications/${id}/event-deliveries`)
  $('#delivery-rows').replaceChildren(
    ...(rows.length
      ? rows.map((d) =>
          el(
            'li',
            {},
            el(
              'span',
              { class: 'what' },
              el('strong', {}, d.event_type ?? 'event'),
              ` · lobby ${d.lobby_id}`,
              el(
                'small',
                {},
                `${d.status} · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'} · next `,
                when(d.next_attempt_at),
              ),
              d.last_error ? el('small', {}, 'Last error: ', text(d.last_error)) : '',
            ),
          ),
        )
      : [el('li', { class: 'muted' }, 'Nothing waiting: every event was delivered.')]),
  )
}

async function loadLobbies(id: string, more: boolean) {
  const page = await admin<Lobbies>('GET', `/applications/${id}/lobbies`, {
    query: { before: more ? oldestLobby : undefined, limit: '50' },
  })
  const list = $('#lobby-rows')
  if (!more) list.replaceChildren()
  list.append(
    ...page.lobbies.map((l) =>
      el(
        'li',
        {},
        el(
          'span',
          { class: 'what' },
          el('a', { href: `#/lobbies/${l.id}` }, `Lobby ${l.id}`),
          el(
            'small',
            {},
            `${l.member_count} member${l.member_count === 1 ? '' : 's'} · ${l.in_call} in the call · `,
            when(l.created_at),
          ),
        ),
        l.active ? el('span', { class: 'badge' }, 'active') : null,
      ),
    ),
  )
  if (!more && !page.lobbies.length) list.append(el('li', { class: 'muted' }, 'No lobbies.'))
  $('#lobbies-status').textContent = `${page.total} lobb${page.total === 1 ? 'y' : 'ies'}`
  oldestLobby = page.lobbies.at(-1)?.id
  show($('#lobbies-more'), page.lobbies.length === 50)
}

export async function openApp(id: string) {
  only('application')
  show($('#rotated'), false)
  $('#ping-result').textContent = ''
  if (app?.id !== id) $('#app-title').textContent = 'Loading…'
  await submitting(webhookForm, async () => {
    const found = (await admin<App[]>('GET', '/applications')).find((a) => a.id === id)
    if (!found) throw new Error('No application with this id.')
    renderApp(found)
    await loadDeliveries(id)
  })
  await submitting(lobbiesForm, () => loadLobbies(id, false))
}

function rotate(which: 'bot' | 'client-secret', label: string) {
  void submitting(rotateForm, async () => {
    const a = app
    if (!a) return
    // Typed confirmation: the application's name, as shown.
    const typed = window.prompt(`Type the application’s name (${a.name}) to make a new ${label}`)
    if (typed === null) throw new Cancelled('not confirmed')
    const reason = value(rotateForm, 'reason') || undefined
    const answer = await admin<{ id: string; bot_token?: string; client_secret?: string }>(
      'POST',
      `/applications/${a.id}/${which}/reset`,
      { body: { confirm: typed, reason } },
    )
    const secret = answer.bot_token ?? answer.client_secret ?? ''
    $('#rotated-secret').replaceChildren(
      ...fact(label[0]!.toUpperCase() + label.slice(1), el('code', { class: 'secret' }, secret)),
    )
    show($('#rotated'), true)
    rotateForm.reset()
  })
}
$('#rotate-bot').addEventListener('click', () => rotate('bot', 'bot token'))
$('#rotate-secret').addEventListener('click', () => rotate('client-secret', 'client secret'))

webhookForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(webhookForm, async () => {
    if (!app) return
    const url = value(webhookForm, 'event_webhooks_url')
    renderApp(await admin<App>('POST', `/applications/${app.id}/event-webhooks`, { body: { url: url || null } }))
    $('#ping-result').textContent = url ? 'Saved: the URL answered the PING.' : 'Event webhooks are off.'
  })
})

$('#webhook-ping').addEventListener('click', () => {
  void submitting(webhookForm, async () => {
    if (!app) return
    const ping = await admin<Ping>('POST', `/applications/${app.id}/event-webhooks/ping`)
    $('#ping-result').textContent = ping.ok
      ? `PING answered in ${ping.latency_ms} ms.`
      : `PING failed after ${ping.latency_ms} ms: ${ping.error ?? 'no answer'}`
    await loadDeliveries(app.id)
  })
})

$('#lobbies-more').addEventListener('click', () => {
  if (app) void submitting(lobbiesForm, () => loadLobbies(app!.id, true))
})

// ---- a lobby

let lobby: LobbyPage | undefined

function person(p: { id: string; username: string; global_name: string | null }) {
  return p.global_name ? [text(p.global_name), ' (', text(p.username), ')'] : [text(p.username)]
}

function renderLobby(page: LobbyPage) {
  lobby = page
  const l = page.lobby
  $('#lobby-title').textContent = `Lobby ${l.id}`
  $<HTMLAnchorElement>('#lobby-back').href = `#/applications/${l.application_id}`
  $('#lobby-facts').replaceChildren(
    ...fact('Application', l.application_id),
    ...fact('Metadata', ...pairs(l.metadata)),
    ...fact('Created', when(l.created_at)),
    ...fact('Closes for idleness', l.idle_deadline ? when(l.idle_deadline) : 'not while a member is online'),
    ...(l.linked_channel_id ? fact('Linked channel', l.linked_channel_id) : []),
  )
  const reason = () => value(lobbyForm, 'reason') || undefined
  $('#lobby-members').replaceChildren(
    ...(page.members.length
      ? page.members.map((m) =>
          el(
            'li',
            {},
            el('span', { class: 'what' }, ...person(m), el('small', {}, m.id, ' · ', ...pairs(m.metadata))),
            m.online ? el('span', { class: 'badge' }, 'online') : null,
            m.in_call ? el('span', { class: 'badge' }, 'in the call') : null,
            el(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Remove ${m.username}`,
                onclick: () =>
                  void submitting(lobbyForm, async () => {
                    await admin('POST', `/lobbies/${l.id}/members/${m.id}/remove`, { body: { reason: reason() } })
                    $('#lobby-notice').textContent = `Removed ${m.username}.`
                    renderLobby(await admin<LobbyPage>('GET', `/lobbies/${l.id}`))
                  }),
              },
              'Remove',
            ),
          ),
        )
      : [el('li', { class: 'muted' }, 'No members.')]),
  )
  $('#lobby-messages').replaceChildren(
    ...(page.messages.length
      ? page.messages.map((m) =>
          el(
            'li',
            {},
            el(
              'span',
              { class: 'what' },
              el('span', {}, el('strong', {}, ...person(m.author)), ': ', text(m.content)),
              el('small', {}, when(m.created_at)),
              m.metadata ? el('small', {}, 'Metadata: ', ...pairs(m.metadata)) : '',
              m.moderation_metadata ? el('small', {}, 'Moderation: ', ...pairs(m.moderation_metadata)) : '',
            ),
          ),
        )
      : [el('li', { class: 'muted' }, 'No messages.')]),
  )
}

export async function openLobby(id: string) {
  only('lobby')
  $('#lobby-notice').textContent = ''
  if (lobby?.lobby.id !== id) $('#lobby-title').textContent = 'Loading…'
  show($('#lobby-close'), true)
  await submitting(lobbyForm, async () =>
    renderLobby(await admin<LobbyPage>('GET', `/lobbies/${encodeURIComponent(id)}`)),
  )
}

$('#lobby-close').addEventListener('click', () => {
  void submitting(lobbyForm, async () => {
    const l = lobby?.lobby
    if (!l) return
    if (!window.confirm(`Close lobby ${l.id}? Its members are told it was deleted.`))
      throw new Cancelled('not confirmed')
    await admin('POST', `/lobbies/${l.id}/close`, { body: { reason: value(lobbyForm, 'reason') || undefined } })
    $('#lobby-notice').textContent = 'Closed: its members were told.'
    $('#lobby-members').replaceChildren()
    show($('#lobby-close'), false)
  })
})
