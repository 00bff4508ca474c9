// /oauth2/authorize?client_id=…&scope=…: the consent screen. It asks the API what the request wants (GET
// /api/v9/oauth2/authorize with the same query), shows it in words, and on Authorize or Cancel follows the redirect
// the API returns (with `code` and `state`, or `error=access_denied`).
import { api, ApiFailure, flattenErrors, session } from './lib/api'
import { $, el, goLogin, show, submitting } from './lib/ui'

type Request = {
  application: { id: string; name: string }
  user: { username: string; global_name: string | null }
  authorized: boolean
  scopes: string[]
  redirect_uri: string
}

const SCOPE_WORDS: Record<string, string> = {
  identify: 'Access your username, avatar and banner',
  email: 'Access your e-mail address',
  guilds: 'Know what servers you’re in',
  connections: 'Access your third-party connections',
  'gateway.connect': 'Connect to the Gateway as you',
  'lobbies.write': 'Create, join and manage lobbies for you, and send messages in them',
  'sdk.social_layer': 'Use social features in the game for you: your profile, lobbies and their messages',
}

const form = $<HTMLFormElement>('#consent-form')
const query = location.search

function problem(message: string) {
  show($('#loading'), false)
  show(form, false)
  $('#problem-text').textContent = message
  show($('#problem'))
}

async function decide(authorize: boolean) {
  const { location: target } = await api<{ location: string }>('POST', `/oauth2/authorize${query}`, { authorize })
  location.assign(target)
}

async function start() {
  if (!session.token()) goLogin()
  let request: Request
  try {
    request = await api<Request>('GET', `/oauth2/authorize${query}`)
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) {
      session.clear()
      goLogin()
    }
    const messages =
      error instanceof ApiFailure
        ? [...flattenErrors(error.errors)].map(([field, m]) => `${field}: ${m.join(' ')}`)
        : []
    return problem(messages.length ? messages.join(' ') : error instanceof Error ? error.message : String(error))
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
    await api('POST', '/auth/logout').catch(() => undefined)
    session.clear()
    goLogin()
  })
  $('#scopes').replaceChildren(...request.scopes.map((scope) => el('li', {}, SCOPE_WORDS[scope] ?? scope)))
  const target = new URL(request.redirect_uri)
  $('#redirect-note').textContent = `Once you authorize or cancel, you will be sent to ${target.origin}.`
  show($('#already'), request.authorized)
  show($('#loading'), false)
  show(form)
  $('#authorize').focus()
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void submitting(form, () => decide(true))
  })
  $('#cancel').addEventListener('click', () => submitting(form, () => decide(false)))
}

void start().catch(() => undefined)
