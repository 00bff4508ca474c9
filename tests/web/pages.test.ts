// The web client over plain HTTP: every page with its security headers and no inline script, assets under
// /assets/, Discord's JSON 404 for everything else, the API's JSON next to the consent page, and no link token in
// the access log.
import { describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { captureLog } from '../../src/core/log'
import { PAGE_ROUTES } from '../../src/web/routes'
import { api, makeApp, makeUser, server } from '../helpers'

const NOT_FOUND = { message: '404: Not Found', code: 0 }
const PAGES = [
  '/login',
  '/register',
  '/verify',
  '/authorize-ip',
  '/reset',
  '/wasntme',
  '/wasntme/abc',
  '/oauth2/authorize?client_id=1',
  '/settings/security',
  '/ra/abc',
  '/lobbies/123',
]

async function get(path: string, init?: RequestInit) {
  const { url } = await server()
  return fetch(`${url}${path}`, { redirect: 'manual', ...init })
}

describe('pages', () => {
  test('every page the e-mails and clients link to answers HTML with CSP, X-Frame-Options DENY and no-referrer', async () => {
    expect(PAGE_ROUTES.map(([path]) => path)).toEqual(
      expect.arrayContaining([
        '/login',
        '/register',
        '/verify',
        '/authorize-ip',
        '/reset',
        '/wasntme/*',
        '/oauth2/authorize',
        '/settings/security',
        '/ra/*',
        '/lobbies/*',
      ]),
    )
    for (const path of PAGES) {
      const r = await get(path)
      expect(r.status, path).toBe(200)
      expect(r.headers.get('content-type')).toStartWith('text/html')
      const csp = r.headers.get('content-security-policy')!
      expect(csp).toContain("script-src 'self'")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).not.toContain('unsafe-inline')
      expect(csp).not.toContain('unsafe-eval')
      expect(r.headers.get('x-frame-options')).toBe('DENY')
      expect(r.headers.get('referrer-policy')).toBe('no-referrer')
      expect(r.headers.get('cache-control')).toBe('no-store')
      // The microphone only for the lobby page (its call); camera and location for none.
      const permissions = r.headers.get('permissions-policy')!
      expect(permissions).toContain('camera=()')
      expect(permissions).toContain(path.startsWith('/lobbies/') ? 'microphone=(self)' : 'microphone=()')
      const html = await r.text()
      // No inline script or style for the CSP to block: every script has a src, no style attributes or elements.
      for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toContain('src="/assets/')
      expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i)
    }
  })

  test('the scripts and styles a page names are served from /assets/ with their types; unknown ones are a JSON 404', async () => {
    const html = await (await get('/settings/security')).text()
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1])
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true)
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true)
    for (const path of assets) {
      const r = await get(path)
      expect(r.status, path).toBe(200)
      expect(r.headers.get('content-type')).toMatch(path.endsWith('.js') ? /javascript/ : /text\/css/)
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    }
    for (const path of ['/assets/chunk-00000000.js', '/assets/..%2F..%2Fpackage.json', '/assets/site.ts']) {
      const r = await get(path)
      expect(r.status, path).toBe(404)
      expect(await r.json()).toEqual(NOT_FOUND)
    }
  })

  test('unknown paths, in the API and out of it, keep the JSON 404; / goes to the login page', async () => {
    for (const path of [
      '/api/v9/nope',
      '/api/nope',
      '/api/v10/users/@me/nothing',
      '/nope',
      '/settings',
      '/login/extra',
      '/chunk-abc.js',
      '/lobbies',
      '/ra',
    ]) {
      const r = await get(path)
      expect(r.status, path).toBe(404)
      expect(await r.json()).toEqual(NOT_FOUND)
    }
    const root = await get('/')
    expect(root.status).toBe(302)
    expect(root.headers.get('location')).toBe('/login')
  })

  test('GET /oauth2/authorize is the consent page while /api/v9/oauth2/authorize keeps answering JSON', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const query = `client_id=${app.id}&response_type=code&scope=identify&redirect_uri=${encodeURIComponent('http://localhost/callback')}`
    const page = await get(`/oauth2/authorize?${query}`, { headers: { authorization: user.token } })
    expect(page.headers.get('content-type')).toStartWith('text/html')
    const json = await api('GET', `/oauth2/authorize?${query}`, { token: user.token })
    expect(json.status).toBe(200)
    expect(json.body.application.id).toBe(app.id)
  })

  test('the gateway still upgrades next to the pages', async () => {
    const { port } = await server()
    const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway?v=9&encoding=json`)
    const hello = await new Promise<any>((resolve, reject) => {
      ws.onmessage = (e) => resolve(JSON.parse(String(e.data)))
      ws.onclose = () => reject(new Error('closed'))
    })
    ws.close()
    expect(hello.op).toBe(10)
  })

  test('the access log names the /wasntme route, never the token in its path', async () => {
    const before = config()
    const lines: string[] = []
    captureLog((line) => void lines.push(line))
    setConfig({ ...before, logLevel: 'info' })
    try {
      const token = 'S3cr3tRevertTokenValue_abcdefghijklmnop'
      expect((await get(`/wasntme/${token}`)).status).toBe(200)
      expect((await get(`/oauth2/authorize?client_id=1&state=${token}`)).status).toBe(200)
      await Bun.sleep(20) // the log line is written after the response
      const requests = lines.filter((l) => l.includes(' request '))
      expect(requests.some((l) => l.includes('route=/wasntme/*'))).toBe(true)
      expect(lines.join('\n')).not.toContain(token)
    } finally {
      captureLog(undefined)
      setConfig({ ...config(), logLevel: before.logLevel })
    }
  })
})
