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
  '/app',
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

  test('unknown paths, in the API and out of it, keep the JSON 404; / goes to the home page', async () => {
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
    expect(root.headers.get('location')).toBe('/app')
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

describe('without the page script', () => {
  test('a form posted to any page is answered 405 with an HTML page, its body never read nor logged', async () => {
    const before = config()
    const lines: string[] = []
    captureLog((line) => void lines.push(line))
    setConfig({ ...before, logLevel: 'debug' })
    const secret = 'posted-password-Zq8!'
    try {
      for (const path of PAGES) {
        for (const [type, body] of [
          ['application/x-www-form-urlencoded', `login=a%40b.c&password=${secret}`],
          [
            'multipart/form-data; boundary=x',
            `--x\r\nContent-Disposition: form-data; name="password"\r\n\r\n${secret}\r\n--x--`,
          ],
          ['application/json', `{"password":"${secret}"`],
          ['text/plain', secret],
        ] as const) {
          const r = await get(path, { method: 'POST', headers: { 'content-type': type }, body })
          expect(r.status, `${path} ${type}`).toBe(405)
          expect(r.headers.get('allow')).toBe('GET, HEAD')
          expect(r.headers.get('content-type')).toStartWith('text/html')
          expect(r.headers.get('content-security-policy')).toContain("script-src 'self'")
          expect(r.headers.get('x-frame-options')).toBe('DENY')
          const html = await r.text()
          expect(html).toContain('<h1>This page needs JavaScript</h1>')
          expect(html).not.toContain(secret)
          expect(html).not.toMatch(/<script\b|\sstyle=/i)
        }
      }
      await Bun.sleep(20)
      expect(lines.some((l) => l.includes('route=/login status=405'))).toBe(true)
      expect(lines.join('\n')).not.toContain(secret)
    } finally {
      captureLog(undefined)
      setConfig({ ...config(), logLevel: before.logLevel })
    }
  })

  test('the 405 comes at once for a body that never ends: it is not read', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('password=half-sent'))
      },
    })
    const started = performance.now()
    const r = await get('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(r.status).toBe(405)
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  test('every page says it needs JavaScript in a <noscript>, and its forms post (never GET)', async () => {
    for (const path of PAGES) {
      const html = await (await get(path)).text()
      expect(html).toContain('<noscript>')
      for (const form of html.match(/<form\b[^>]*>/g) ?? []) {
        expect(form, path).toContain('method="post"')
        expect(form, path).not.toContain('action=')
      }
    }
  })
})

describe('404 page, favicon, product settings', () => {
  test('a browser gets an HTML 404 page for unknown web paths; /api and non-browsers keep the JSON 404', async () => {
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
    for (const path of ['/nope', '/settings', '/login/extra', '/lobbies', '/ra']) {
      const r = await get(path, { headers: browser })
      expect(r.status, path).toBe(404)
      expect(r.headers.get('content-type')).toStartWith('text/html')
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'")
      const html = await r.text()
      expect(html).toContain('<h1>Page not found</h1>')
      expect(html).toContain('href="/login"')
    }
    for (const path of ['/api/v9/nope', '/api/nope', '/api']) {
      const r = await get(path, { headers: browser })
      expect(r.status, path).toBe(404)
      expect(await r.json()).toEqual(NOT_FOUND)
    }
    const post = await get('/nope', { method: 'POST', headers: browser })
    expect(await post.json()).toEqual(NOT_FOUND)
  })

  test('a favicon is served and every page links it', async () => {
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const r = await get(path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('image/svg+xml')
      expect(await r.text()).toStartWith('<svg')
    }
    for (const path of PAGES) expect(await (await get(path)).text()).toContain('<link rel="icon" href="/favicon.svg">')
  })

  test('PRODUCT_NAME, LOGO_URL, TERMS_URL and PRIVACY_URL reach the pages (escaped), the logo allowed by the CSP', async () => {
    const before = config()
    const defaults = await (await get('/register')).text()
    expect(defaults).toContain('<span class="brand-name">Lobby server</span>')
    expect(defaults).toContain('Terms of Service and the Privacy Policy')
    expect(defaults).not.toContain('data-link=')
    setConfig({
      ...before,
      productName: 'Games & <Friends>',
      logoUrl: 'https://cdn.example.com/logo.png',
      termsUrl: 'https://example.com/terms?a=1&b=2',
      privacyUrl: 'https://example.com/privacy',
    })
    try {
      for (const path of PAGES) {
        const r = await get(path)
        const html = await r.text()
        expect(html).toContain('<span class="brand-name">Games &amp; &lt;Friends&gt;</span>')
        expect(html).toContain('<img class="logo" src="https://cdn.example.com/logo.png" alt=""')
        expect(html).toMatch(/<title>[^<]+ · Games &amp; &lt;Friends&gt;<\/title>/)
        expect(r.headers.get('content-security-policy')).toContain("img-src 'self' data: https://cdn.example.com;")
      }
      const register = await (await get('/register')).text()
      expect(register).toContain(
        '<a href="https://example.com/terms?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">Terms of Service</a>',
      )
      expect(register).toContain(
        '<a href="https://example.com/privacy" target="_blank" rel="noopener noreferrer">Privacy Policy</a>',
      )
    } finally {
      setConfig(before)
    }
  })
})
