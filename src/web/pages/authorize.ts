// /oauth2/authorize?client_id=…&scope=…: the consent screen. It asks the API what the request wants (GET
// /api/v9/oauth2/authorize with the same query), shows it in words, and on Authorize or Cancel follows the redirect
// the API returns (with `code` and `state`, or `error=access_denied`). With the bot scope (Discord's bot
// authorization) the person also picks a server where they may add the bot (the API lists those: Manage Server) and
// which of the asked permissions it gets: only those they hold there are offered (the owner and administrators hold
// all), as Discord's.
import { ApiError, client } from './lib/client'
import { $, el, goLogin, show, submitting, focusHeading } from './lib/ui'

type Guild = { id: string; name: string; owner: boolean; permissions: string }

type Request = {
  application: { id: string; name: string }
  user: { username: string; global_name: string | null }
  authorized: boolean
  scopes: string[]
  redirect_uri?: string
  /** The bot scope: the guilds where the person may add the bot. */
  guilds?: Guild[]
}

/** Discord's names of the permission bits, by bit. */
const PERMISSION_NAMES: Record<number, string> = {
  0: 'Create Invite',
  1: 'Kick Members',
  2: 'Ban Members',
  3: 'Administrator',
  4: 'Manage Channels',
  5: 'Manage Server',
  6: 'Add Reactions',
  7: 'View Audit Log',
  8: 'Priority Speaker',
  9: 'Video',
  10: 'View Channels',
  11: 'Send Messages',
  12: 'Send Text-to-Speech Messages',
  13: 'Manage Messages',
  14: 'Embed Links',
  15: 'Attach Files',
  16: 'Read Message History',
  17: 'Mention @everyone, @here, and All Roles',
  18: 'Use External Emojis',
  19: 'View Server Insights',
  20: 'Connect',
  21: 'Speak',
  22: 'Mute Members',
  23: 'Deafen Members',
  24: 'Move Members',
  25: 'Use Voice Activity',
  26: 'Change Nickname',
  27: 'Manage Nicknames',
  28: 'Manage Roles',
  29: 'Manage Webhooks',
  30: 'Manage Expressions',
  31: 'Use Application Commands',
  32: 'Request to Speak',
  33: 'Manage Events',
  34: 'Manage Threads',
  35: 'Create Public Threads',
  36: 'Create Private Threads',
  37: 'Use External Stickers',
  38: 'Send Messages in Threads',
  39: 'Use Activities',
  40: 'Timeout Members',
  41: 'View Creator Monetization Analytics',
  42: 'Use Soundboard',
  43: 'Create Expressions',
  44: 'Create Events',
  45: 'Use External Sounds',
  46: 'Send Voice Messages',
  49: 'Send Polls',
  50: 'Use External Apps',
}

const ADMINISTRATOR = 1n << 3n

const SCOPE_WORDS: Record<string, string> = {
  identify: 'Access your username, avatar and banner',
  email: 'Access your e-mail address',
  guilds: 'Know what servers you’re in',
  connections: 'Access your third-party connections',
  'gateway.connect': 'Connect to the Gateway as you',
  'lobbies.write': 'Create, join and manage lobbies for you, and send messages in them',
  'sdk.social_layer': 'Use social features in the game for you: your profile, friends, lobbies and their messages',
  'relationships.read': 'Know who your friends are, and see their requests',
  'relationships.write': 'Send, accept and remove friend requests and blocks for you',
  bot: 'Add a bot to a server you manage',
  'applications.commands': 'Create commands in that server',
}

const form = $<HTMLFormElement>('#consent-form')
const query = location.search

/** What each refused part of the request means to the person (the API's own words go under "details"). */
const PLAIN: Record<string, string> = {
  redirect_uri:
    'The app wants to send you back to an address it did not register with this server, so it is not safe to continue.',
  client_id: 'This server has no such app: the link may be mistyped, or the app was deleted.',
  scope: 'The app asked for permissions this server does not know.',
  response_type: 'The app made its request in a way this server does not accept.',
}

/** The request cannot go on: in plain words (UX-T4 finding 24), the API's for the developer beside them. */
function problem(message: string, plain?: string) {
  show($('#loading'), false)
  show(form, false)
  $('#problem-text').textContent = plain ?? message
  $('#problem-detail').textContent = message
  show($('#problem-details'), plain !== undefined && plain !== message)
  show($('#problem'))
}

/** The bot scope's choices: the server picked and the permissions left ticked. */
let installChoice: (() => { guild_id: string | undefined; permissions: string }) | undefined

async function decide(authorize: boolean) {
  const body = authorize && installChoice ? { authorize, ...installChoice() } : { authorize }
  const { location: target } = await client.rest.request<{ location: string }>('POST', `/oauth2/authorize${query}`, {
    body,
  })
  location.assign(target)
}

/** The asked permission bits, lowest first (the API checked the number before the page got here). */
function askedBits(): bigint[] {
  let asked = 0n
  try {
    asked = BigInt(new URLSearchParams(query).get('permissions') || '0')
  } catch {}
  const bits: bigint[] = []
  for (let bit = 0n; asked >> bit; bit++) if ((asked >> bit) & 1n) bits.push(bit)
  return bits
}

/** The server picker and the permission boxes; each box offered only where the person holds the permission. */
function showInstall(guilds: Guild[]) {
  const params = new URLSearchParams(query)
  const select = $<HTMLSelectElement>('#guild')
  select.replaceChildren(
    el('option', { value: '' }, 'Select a server'),
    ...guilds.map((g) => el('option', { value: g.id }, g.name)),
  )
  const preselected = params.get('guild_id')
  if (preselected && guilds.some((g) => g.id === preselected)) {
    select.value = preselected
    if (params.get('disable_guild_select') === 'true') select.disabled = true
  }
  const boxes = askedBits().map((bit) => {
    const box = el('input', { type: 'checkbox', id: `permission-${bit}`, checked: true })
    box.dataset.bit = String(bit)
    return box
  })
  $('#permission-list').replaceChildren(
    ...boxes.map((box) =>
      el(
        'div',
        { class: 'field inline' },
        box,
        el('label', { for: box.id }, PERMISSION_NAMES[Number(box.dataset.bit)] ?? `Permission ${box.dataset.bit}`),
      ),
    ),
  )
  const offer = () => {
    const guild = guilds.find((g) => g.id === select.value)
    const held = guild ? BigInt(guild.permissions) : 0n
    const all = !!guild && (guild.owner || (held & ADMINISTRATOR) !== 0n)
    for (const box of boxes) {
      const holds = all || ((held >> BigInt(box.dataset.bit!)) & 1n) === 1n
      box.disabled = !holds
      if (!holds) box.checked = false
      else if (box.dataset.offered !== 'yes') box.checked = true
      box.dataset.offered = holds ? 'yes' : 'no'
    }
  }
  select.addEventListener('change', offer)
  offer()
  installChoice = () => ({
    guild_id: select.value || undefined,
    permissions: boxes
      .filter((b) => b.checked && !b.disabled)
      .reduce((sum, b) => sum | (1n << BigInt(b.dataset.bit!)), 0n)
      .toString(),
  })
  show($('#no-guilds'), guilds.length === 0)
  show($('#permissions'), boxes.length > 0)
  $('#wants').textContent = 'wants to be added to a server'
  show($('#install'))
}

async function start() {
  if (!client.token) goLogin()
  let request: Request
  try {
    request = await client.rest.request<Request>('GET', `/oauth2/authorize${query}`)
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      client.setToken(null)
      goLogin()
    }
    const fields = error instanceof ApiError ? Object.entries(error.fieldErrors()) : []
    const messages = fields.map(([field, m]) => `${field}: ${m.join(' ')}`)
    const plain = fields.map(([field]) => PLAIN[field]).filter(Boolean)
    if (error instanceof ApiError && error.code === 10002) plain.push(PLAIN.client_id!)
    const raw = messages.length ? messages.join(' ') : error instanceof Error ? error.message : String(error)
    return problem(raw, plain.length ? plain.join(' ') : undefined)
  }
  $('#app-name').textContent = request.application.name
  $('#app-name-2').textContent = request.application.name
  $('#user-name').textContent = request.user.global_name
    ? `${request.user.global_name} (${request.user.username})`
    : request.user.username
  $<HTMLAnchorElement>('#not-you').href =
    `/login?redirect_to=${encodeURIComponent(location.pathname + location.search)}`
  $('#not-you').addEventListener('click', async (event) => {
    event.preventDefault()
    await client.auth.logout().catch(() => undefined)
    goLogin()
  })
  $('#scopes').replaceChildren(...request.scopes.map((scope) => el('li', {}, SCOPE_WORDS[scope] ?? scope)))
  $('#redirect-note').textContent = request.redirect_uri
    ? `Once you authorize or cancel, you will be sent to ${new URL(request.redirect_uri).origin}.`
    : 'Once you authorize, it joins the server you chose.'
  if (request.guilds) showInstall(request.guilds)
  show($('#already'), request.authorized)
  show($('#loading'), false)
  show(form)
  // Focus on the request, not on Authorize: an Enter typed for the previous page must not grant access (UX-T4 23).
  focusHeading(form)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void submitting(form, () => decide(true))
  })
  $('#cancel').addEventListener('click', () => submitting(form, () => decide(false)))
}

void start().catch(() => undefined)
