// The web client's key flows as a person clicks through them, written against a Target (target.ts) so that the
// same tests run on the server from source (flows.test.ts) and on the compiled binary (binary.test.ts): login,
// register, TOTP, passkey, reset, QR login, OAuth2 consent, the lobby page. Every request URL the browser makes is
// recorded and none may carry the password typed; from the binary, neither may its log.
import { describe, expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { Secret, TOTP } from 'otpauth'
import type { Page, Request } from 'playwright-core'
import { GatewayClient } from '../gateway-client'
import { browserTest, expectCount, expectText, otherContext, signIn, storedToken, type Web } from './browser'

const REDIRECT = 'http://localhost/callback'
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')
const NEW_PASSWORD = 'a brand new passphrase 42'

/** The code an authenticator shows `steps` periods from now (the server accepts one step either side). */
export function totpAt(secret: string, steps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: Date.now() + steps * 30_000,
  })
}

/** Every URL the page's context requests, for the password check. */
export function recordUrls(page: Page): string[] {
  const urls: string[] = []
  page.context().on('request', (r: Request) => urls.push(r.url()))
  return urls
}

export function expectNoSecretIn(urls: string[], ...secrets: string[]): void {
  for (const secret of secrets) {
    const forms = [secret, encodeURIComponent(secret), secret.replaceAll(' ', '+')]
    for (const url of urls) for (const form of forms) expect(url).not.toContain(form)
  }
}

async function virtualAuthenticator(page: Page) {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
}

/** axe-core (run in the page, past its CSP) finds no serious or critical accessibility violation. */
async function expectNoSeriousViolations(page: Page): Promise<void> {
  const violations = (await page.evaluate(
    `${AXE_SOURCE}\n;axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`,
  )) as { id: string; impact: string; nodes: string[] }[]
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([])
}

async function logIn(page: Page, login: string, password: string) {
  await page.getByLabel('E-mail or phone number').fill(login)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Log in', exact: true }).click()
}

export function webFlows(web: Web): void {
  const t = () => web.target
  const me = async (token: string | null) => (await t().api('GET', '/users/@me', { token: token ?? undefined })).body

  describe('key flows', () => {
    browserTest(
      web,
      'with JavaScript off, a posted form gets a page saying so; no URL carries the password',
      async (page, context) => {
        const tab = await (await otherContext(context, { javaScriptEnabled: false })).newPage()
        const urls = recordUrls(tab)
        const secret = `no script pass ${Date.now()}`
        for (const path of ['/login', '/register', '/reset', '/wasntme/abc']) {
          await tab.goto(path)
          await tab.getByRole('heading', { name: 'This page needs JavaScript' }).first().waitFor()
          const field = tab.locator('form:visible input[type=password]').first()
          await field.fill(secret, { timeout: 5_000 })
          const answer = tab.waitForResponse((r) => r.request().method() === 'POST', { timeout: 5_000 })
          await field.press('Enter')
          expect((await answer).status()).toBe(405)
          await tab.getByRole('heading', { name: 'This page needs JavaScript' }).waitFor()
          expect(await tab.getByRole('link', { name: 'Back to the page' }).getAttribute('href')).toBe(path)
        }
        expect(urls.length).toBeGreaterThan(4)
        expectNoSecretIn(urls, secret)
        expect(t().output()).toContain('route=/login status=405')
        expect(t().output()).not.toContain(secret)
      },
    )

    browserTest(web, 'login: a wrong password is named, the right one logs in; no URL carries it', async (page) => {
      const user = await t().user()
      const urls = recordUrls(page)
      await page.goto('/login')
      await logIn(page, user.email, 'not the password at all')
      await expectText(page.locator('#password-error'), 'Login or password is invalid.')
      await page.getByLabel('Password', { exact: true }).fill(user.password)
      await page.getByRole('button', { name: 'Log in', exact: true }).click()
      await page.waitForURL('**/app')
      await expectText(page.locator('#me-name'), user.username)
      expect((await me(await storedToken(page))).id).toBe(user.id)
      expectNoSecretIn(urls, user.password, 'not the password at all')
      expect(t().output()).not.toContain(user.password)
    })

    browserTest(web, 'register: the form creates the account and the mailed link verifies it', async (page) => {
      const name = `reg${Date.now().toString(36)}`
      const email = `${name}@example.test`
      const urls = recordUrls(page)
      await page.goto('/register')
      await page.getByLabel('E-mail', { exact: true }).fill(email)
      await page.getByLabel('Username', { exact: true }).fill(name)
      await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD)
      await page.getByLabel('Date of birth').fill('1990-04-01')
      await page.locator('#consent').check()
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.getByRole('heading', { name: new RegExp(`Welcome, ${name}`) }).waitFor()
      const token = await storedToken(page)
      expect((await me(token)).verified).toBe(false)
      // A link that does not work, not verified yet: said plainly, with a new link one click away (UX-T4 17).
      await page.goto('/verify#token=not-a-real-token')
      await page.getByRole('heading', { name: 'This link no longer works' }).waitFor()
      await page.getByRole('button', { name: 'Send me a new link' }).click()
      await expectText(
        page.locator('#send-new-link + [role=status]'),
        `We sent a new link to ${email}. Open the newest e-mail.`,
      )
      // The new mail goes out after the answer: wait for it (the first link is replaced by it).
      for (let i = 0; i < 50 && (await t().outbox(email)).length < 2; i++) await Bun.sleep(100)
      const [mail] = await t().outbox(email)
      const link = /https?:\/\/\S+\/verify#\S+/.exec(mail ?? '')?.[0]
      expect(link).toBeDefined()
      await page.goto('/app') // another page first: from /verify#… the link would only change the fragment
      await page.goto(link!)
      await page.getByRole('heading', { name: 'E-mail verified' }).waitFor()
      expect((await me(token)).verified).toBe(true)
      // Opened again: the address is already verified, and the page says that rather than "did not work".
      await page.goto('/login')
      await page.goto(link!)
      await page.getByRole('heading', { name: 'Your e-mail is already verified' }).waitFor()
      expectNoSecretIn(urls, NEW_PASSWORD)
    })

    browserTest(
      web,
      'MFA: TOTP turned on in settings, then the next login asks for the code and refuses the used one',
      async (page) => {
        const user = await t().user()
        await signIn(page, user.token)
        await page.goto('/settings/security')
        await page.getByRole('button', { name: 'Enable authenticator app' }).click()
        await page.locator('#totp-qr svg').waitFor()
        const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s+/g, '')
        const enrolmentCode = totpAt(secret)
        await page.locator('#totp-code').fill(enrolmentCode)
        await page.locator('#totp-password').fill(user.password)
        await page.getByRole('button', { name: 'Turn on' }).click()
        await expect(page.locator('#backup-list li').first().waitFor()).resolves.toBeUndefined()
        expect((await me(await storedToken(page))).mfa_enabled).toBe(true)

        await page.getByRole('button', { name: 'Log out' }).first().click()
        await page.waitForURL('**/login?logged_out=1')
        await logIn(page, user.email, user.password)
        // The enrolment spent this period's code: typed again, the page says it was used.
        await page.getByLabel('Six-digit code from your authenticator app').fill(enrolmentCode)
        await page.getByRole('button', { name: 'Verify' }).click()
        await expectText(
          page.locator('#mfa-code-error'),
          'This two-factor code was already used. Wait for the next code.',
        )
        // The next period's code is within the server's window.
        await page.getByLabel('Six-digit code from your authenticator app').fill(totpAt(secret, 1))
        await page.getByRole('button', { name: 'Verify' }).click()
        await page.waitForURL('**/app')
        expect((await me(await storedToken(page))).id).toBe(user.id)
      },
    )

    browserTest(
      web,
      'settings: the authenticator app and SMS sections say which is on and offer only the other action',
      async (page) => {
        const user = await t().user()
        const secret = new Secret({ size: 20 }).base32
        const enabled = await t().api('POST', '/users/@me/mfa/totp/enable', {
          token: user.token,
          body: { secret, code: totpAt(secret), password: user.password },
        })
        expect(enabled.status).toBe(200)
        const token = enabled.body.token as string
        // A verified phone, as the settings page's phone form adds one.
        const phone = `+1558${Math.floor(1e6 + Math.random() * 8.99e6)}`
        expect((await t().api('POST', '/users/@me/phone', { token, body: { phone } })).status).toBe(204)
        const code = /(\d{6})/.exec((await t().outbox(phone))[0] ?? '')?.[1]
        const verified = await t().api('POST', '/phone-verifications/verify', { body: { phone, code } })
        const phoneToken = verified.body.token
        const added = await t().api('POST', '/users/@me/phone', {
          token,
          body: { phone_token: phoneToken, password: user.password },
        })
        expect(added.status).toBe(204)

        const totp = page.locator('#totp-section')
        const sms = page.locator('#sms-section')
        const button = (name: string) => page.getByRole('button', { name, exact: true })
        await signIn(page, token)
        await page.goto('/settings/security')
        await expectText(page.locator('#totp-state'), 'On: logins ask for a code from your app.')
        expect(await totp.getAttribute('data-state')).toBe('on')
        await button('Remove authenticator app').waitFor()
        expect(await button('Enable authenticator app').isVisible()).toBe(false)
        await expectText(page.locator('#sms-state'), `Off. Turn it on to receive codes at ${phone}.`)
        expect(await button('Turn off SMS').isVisible()).toBe(false)

        await page.locator('#sms-password').fill(user.password)
        await button('Turn on SMS').click()
        await expectText(
          page.locator('#sms-state'),
          `On: text messages to ${phone} can stand in for your authenticator.`,
        )
        expect(await sms.getAttribute('data-state')).toBe('on')
        expect(await button('Turn on SMS').isVisible()).toBe(false)
        expect((await me(await storedToken(page))).authenticator_types).toEqual([2, 3])

        // Turning SMS off is sensitive: the page asks for a factor first (the next period's code).
        await page.locator('#sms-password').fill(user.password)
        await button('Turn off SMS').click()
        const dialog = page.getByRole('dialog', { name: 'Confirm it’s you' })
        await dialog.getByLabel('Six-digit code from your authenticator app').fill(totpAt(secret, 1))
        await dialog.getByRole('button', { name: 'Verify' }).click()
        await expectText(page.locator('#sms-state'), `Off. Turn it on to receive codes at ${phone}.`)
        expect(await button('Turn off SMS').isVisible()).toBe(false)
        await button('Turn on SMS').waitFor()

        // Within the elevation's five minutes, the app is removed at once; its section then offers only enabling.
        await button('Remove authenticator app').click()
        await expectText(page.locator('#totp-state'), 'Off.')
        expect(await totp.getAttribute('data-state')).toBe('off')
        await button('Enable authenticator app').waitFor()
        expect(await button('Remove authenticator app').isVisible()).toBe(false)
        await expectText(
          page.locator('#sms-state'),
          /^Off\. Phone .* once an authenticator app or a security key is set up\.$/,
        )
        expect(await button('Turn on SMS').isVisible()).toBe(false)
        expect((await me(await storedToken(page))).authenticator_types).toEqual([])
      },
    )

    browserTest(
      web,
      'sessions: each shows its client, location and last use, this device marked, so the right one is logged out',
      async (page) => {
        const user = await t().user()
        const firefox = await t().api('POST', '/auth/login', {
          body: { login: user.email, password: user.password },
          headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0' },
        })
        expect(firefox.status).toBe(200)
        await page.goto('/login')
        await logIn(page, user.email, user.password)
        await page.waitForURL('**/app')
        await page.goto('/settings/security')

        // What the API answers with real data: no address; the country as the location, "Unknown" for loopback.
        const { body } = await t().api('GET', '/auth/sessions', { token: (await storedToken(page))! })
        expect(body.user_sessions).toHaveLength(3)
        for (const s of body.user_sessions) {
          expect(Object.keys(s).sort()).toEqual(['approx_last_used_time', 'client_info', 'id_hash'])
          expect(Object.keys(s.client_info).sort()).toEqual(['location', 'os', 'platform'])
          expect([null, 'Unknown']).toContain(s.client_info.location) // a session the CLI made has none
        }

        const rows = page.locator('#sessions li')
        await expectCount(rows, 3)
        const mine = page.locator('#sessions li[data-current="true"]')
        await expectText(mine.locator('.client'), /^(Headless ?)?Chrom(e|ium)( Headless)? on Linux\s*this device$/)
        expect(await rows.first().getAttribute('data-current')).toBe('true') // listed first
        await expectText(mine.locator('.location'), 'Unknown location')
        await expectText(mine.locator('.last-used'), /^Last used just now \(.+\)$/)
        expect(await mine.getByRole('button', { name: 'Log out' }).count()).toBe(0)

        const other = page.locator('#sessions li', { hasText: 'Firefox on Windows' })
        await expectText(other.locator('.location'), 'Unknown location')
        await expectText(other.locator('.last-used'), /^Last used just now/)
        // The session the user was made with (the CLI's, or the test helper's login) has no place either.
        for (const row of await rows.all()) await expectText(row.locator('.location'), 'Unknown location')

        // Logging out the Firefox one ends exactly that session (no MFA: the password confirms it).
        await other.getByRole('button', { name: 'Log out' }).click()
        const dialog = page.getByRole('dialog', { name: 'Confirm it’s you' })
        await dialog.getByLabel('Your password').fill(user.password)
        await dialog.getByRole('button', { name: 'Verify' }).click()
        await expectCount(rows, 2)
        expect(await page.locator('#sessions li', { hasText: 'Firefox on Windows' }).count()).toBe(0)
        expect((await t().api('GET', '/users/@me', { token: firefox.body.token })).status).toBe(401)
        expect((await t().api('GET', '/users/@me', { token: user.token })).status).toBe(200)
      },
    )

    browserTest(web, 'passkey: added in settings, then it signs in with no password', async (page) => {
      const user = await t().user()
      await virtualAuthenticator(page)
      await signIn(page, user.token)
      await page.goto('/settings/security')
      await page.getByLabel('Name of the new key').fill('Laptop')
      await page.getByRole('button', { name: 'Add a security key or passkey' }).click()
      await page.locator('li[data-key="Laptop"]').waitFor()
      // Logging out lands on /login, where the passkey answers the autofill request at once.
      const finished = page.waitForResponse('**/api/v9/auth/conditional/finish')
      await page.getByRole('button', { name: 'Log out' }).first().click()
      expect((await finished).status()).toBe(200)
      await page.waitForURL('**/app')
      const token = await storedToken(page)
      expect(token).not.toBe(user.token)
      expect((await me(token)).id).toBe(user.id)
    })

    browserTest(
      web,
      'reset: forgot on /login, the mailed link sets a new password; opened again it says it no longer works',
      async (page) => {
        const user = await t().user()
        const urls = recordUrls(page)
        await page.goto('/login')
        await page.getByLabel('E-mail or phone number').fill(user.email)
        await page.getByRole('button', { name: 'Forgot your password?' }).click()
        await expectText(page.locator('#login-notice'), /we sent it a link to reset the password/)
        let link: string | undefined
        for (let i = 0; i < 50 && !link; i++) {
          link = /https?:\/\/\S+\/reset#token=\S+/.exec((await t().outbox(user.email))[0] ?? '')?.[0]
          if (!link) await Bun.sleep(100)
        }
        await page.goto(link!)
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD)
        await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD)
        await page.getByRole('button', { name: 'Change password' }).click()
        await page.getByRole('heading', { name: 'Password changed' }).waitFor()
        expect((await me(await storedToken(page))).id).toBe(user.id)
        // The same link opened again says at once that it no longer works: no form to fill in for nothing.
        await page.goto('/login')
        await page.goto(link!)
        await page.getByRole('heading', { name: 'This link no longer works' }).waitFor()
        expect(await page.getByLabel('New password', { exact: true }).isVisible()).toBe(false)
        expect(new URL(page.url()).hash).toBe('') // the token left the address bar
        await page.goto('/reset#token=not-a-real-token')
        await page.getByRole('heading', { name: 'This link no longer works' }).waitFor()
        expectNoSecretIn(urls, NEW_PASSWORD)
        expect(t().output()).not.toContain(NEW_PASSWORD)
      },
    )

    browserTest(web, 'QR login: a logged-in phone approves and the desktop is logged in', async (desktop, context) => {
      const user = await t().user()
      await desktop.goto('/login')
      const code = desktop.locator('#qr-code[data-qr-url]')
      await code.waitFor({ timeout: 10_000 })
      const url = (await code.getAttribute('data-qr-url'))!
      const mobile = await (await otherContext(context)).newPage()
      await signIn(mobile, user.token)
      await mobile.goto(url)
      await mobile.getByRole('button', { name: 'Approve' }).click()
      await mobile.getByRole('heading', { name: 'Approved' }).waitFor()
      await desktop.waitForURL('**/app')
      expect((await me(await storedToken(desktop))).id).toBe(user.id)
    })

    browserTest(web, 'consent: a logged-in person authorizes an app and is sent back with a code', async (page) => {
      const user = await t().user()
      const app = await t().app([REDIRECT])
      await page.route(`${REDIRECT}**`, (route) => route.fulfill({ contentType: 'text/plain', body: 'the game' }))
      await signIn(page, user.token)
      const query = new URLSearchParams({
        client_id: app.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'identify',
        state: 'st4te',
      })
      await page.goto(`/oauth2/authorize?${query}`)
      await page.getByRole('button', { name: 'Authorize' }).click()
      await page.waitForURL(`${REDIRECT}?**`)
      const back = new URL(page.url())
      expect(back.searchParams.get('state')).toBe('st4te')
      expect(back.searchParams.get('code')).toMatch(/^\S{20,}$/)
    })

    browserTest(
      web,
      'a player registers, lands home, opens the lobby a game made: history, names, chat from the box, keyboard, 390 px, axe',
      async (page) => {
        // Registered in the browser: the page lands home, where a new player is told what to do.
        const name = `pl${Date.now().toString(36)}`
        await page.goto('/register')
        await page.getByLabel('E-mail', { exact: true }).fill(`${name}@example.test`)
        await page.getByLabel('Username', { exact: true }).fill(name)
        await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD)
        await page.getByLabel('Date of birth').fill('1990-04-01')
        await page.locator('#consent').check()
        await page.getByRole('button', { name: 'Create account' }).click()
        await page.getByRole('link', { name: 'Continue' }).click()
        await page.waitForURL('**/app')
        await page.locator('#no-lobbies').waitFor()
        await expectText(page.locator('#me-name'), name)
        await expectNoSeriousViolations(page)
        const user = await me(await storedToken(page))

        // A game's bot makes a lobby with the player and a friend; the friend (the game, its OAuth2 token) chats first.
        const friend = await t().user()
        const named = await t().api('PATCH', '/users/@me', {
          token: friend.token,
          body: { global_name: 'Friend Person' },
        })
        expect(named.status).toBe(200)
        const app = await t().app([REDIRECT])
        const bot = `Bot ${app.bot_token}`
        const lobby = await t().api('POST', '/lobbies', {
          token: bot,
          body: { members: [{ id: user.id }, { id: friend.id }], metadata: { name: 'Friday squad' } },
        })
        expect(lobby.status).toBe(201)
        const early = await t().api('POST', `/lobbies/${lobby.body.id}/messages`, {
          token: bot,
          body: { content: 'hello from the game, **before** you came' },
        })
        expect(early.status).toBe(201)

        // Home lists it by its name; the player follows the link.
        await page.reload()
        await page.getByRole('link', { name: 'Friday squad' }).click()
        await page.waitForURL(`**/lobbies/${lobby.body.id}`)
        await expectText(page.locator('#connection'), 'Connected.')
        await expectText(page.locator('#lobby-title'), 'Friday squad')
        // The history a late joiner missed, rendered (bold as bold); every member by name, the player marked "You".
        await expectText(page.locator(`#messages li[data-message="${early.body.id}"] .content strong`), 'before')
        await expectText(page.locator(`#members li[data-user="${friend.id}"] .name`), 'Friend Person')
        await expectText(page.locator(`#members li[data-user="${user.id}"] .badge.you`), 'You')
        expect(await page.locator('#members').textContent()).not.toContain(friend.id)

        // Keyboard only: Tab reaches the box, Enter sends, Shift+Enter makes a new line.
        await page.locator('#message-input').focus()
        await page.keyboard.type('line one')
        await page.keyboard.press('Shift+Enter')
        await page.keyboard.type('line two')
        await expectText(page.locator('#message-count'), '17 / 4000')
        await page.keyboard.press('Enter')
        const mine = page.locator('#messages li', { hasText: 'line one' })
        await mine.waitFor()
        expect(await mine.locator('.content').textContent()).toBe('line one\nline two')
        // Posted once, as the player, through the lobby's messages (the game reads it there).
        const history = await t().api('GET', `/lobbies/${lobby.body.id}/messages`, { token: bot })
        expect(history.body.filter((m: { content: string }) => m.content.startsWith('line one'))).toEqual([
          expect.objectContaining({ author: expect.objectContaining({ id: user.id }) }),
        ])
        // A message from the game while the page is open arrives live; a newcomer appears by name.
        await t().api('POST', `/lobbies/${lobby.body.id}/messages`, { token: bot, body: { content: 'gg' } })
        await expectText(page.locator('#messages li').last().locator('.content'), 'gg')
        const late = await t().user()
        await t().api('PUT', `/lobbies/${lobby.body.id}/members/${late.id}`, { token: bot, body: {} })
        await expectText(page.locator(`#members li[data-user="${late.id}"] .name`), late.username)
        await expectNoSeriousViolations(page)

        // Voice from the compiled binary (its media server embedded): the player joins the lobby's call from the page
        // (a fake microphone), is shown in it, and leaves. From source, tests/web/lobby.test.ts covers the call in depth.
        if (t().kind === 'binary') {
          await page.getByRole('button', { name: 'Join voice' }).click()
          await page.locator('#call-state[data-state="connected"]').waitFor({ timeout: 15_000 })
          await page.locator(`#members li[data-user="${user.id}"][data-connected="true"]`).waitFor()
          await page.getByRole('button', { name: 'Leave' }).click()
          await expectText(page.locator('#call-state'), 'You left the call.')
          await page.locator(`#members li[data-user="${user.id}"][data-connected="false"]`).waitFor()
        }

        // A phone: nothing wider than the screen, the box still there.
        await page.setViewportSize({ width: 390, height: 844 })
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
        expect(await page.locator('#message-input').isVisible()).toBe(true)
        await page.goto('/app')
        await page.getByRole('link', { name: 'Friday squad' }).waitFor()
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)

        // Settings list the web app among the authorized apps (UX-T4 finding 25), as such, with nothing to remove.
        await page.setViewportSize({ width: 1280, height: 800 })
        await page.goto('/settings/security')
        const webApp = page.locator('#apps li[data-first-party="true"]')
        await expectText(webApp.locator('.name'), 'This web app')
        expect(await webApp.getByRole('button').count()).toBe(0)
        await expectNoSeriousViolations(page)

        // Log out from the navigation: the login page says so, and the first-party token ended with the session.
        const appToken = await page.evaluate(() => localStorage.getItem('app_token'))
        await page.getByRole('button', { name: 'Log out' }).click()
        await page.waitForURL('**/login?logged_out=1')
        await expectText(page.locator('#login-notice'), 'You have logged out.')
        const ended = await t().api('GET', '/users/@me', { token: `Bearer ${JSON.parse(appToken!)}` })
        expect(ended.status).toBe(401)
      },
      60_000,
    )

    browserTest(
      web,
      'friends on the home page: add by username, accepted live in the other browser, presence, block, 390 px, axe',
      async (page, context) => {
        const alice = await t().user()
        const bob = await t().user()
        await signIn(page, alice.token)
        // A first-party token kept from before the pages asked for the relationship scopes is exchanged again.
        await page.goto('/app')
        await page.locator('#no-friends').waitFor()
        const kept = await page.evaluate(() => localStorage.getItem('app_token'))
        await page.evaluate(() => localStorage.setItem('app_token_scope', 'identify lobbies.write gateway.connect'))
        await page.reload()
        await page.locator('#no-friends').waitFor()
        expect(await page.evaluate(() => localStorage.getItem('app_token'))).not.toBe(kept)
        const add = page.getByLabel('Add a friend by their username')
        // A name nobody has: said plainly at the field, not as a code.
        await add.fill('nobody-has-this-name')
        await page.getByRole('button', { name: 'Send friend request' }).click()
        await expectText(page.locator('#friend-username-error'), /^No one has that username\./)
        expect(await add.getAttribute('aria-invalid')).toBe('true')
        await add.fill(bob.username)
        await add.press('Enter')
        await expectText(page.locator('#friend-status'), `Friend request sent to ${bob.username}.`)
        await expectText(page.locator(`#requests li[data-user="${bob.id}"]`), /Friend request sent/)

        // Bob's browser shows the request; his Accept reaches Alice's page without a reload, Bob online.
        const other = await (await otherContext(context)).newPage()
        await signIn(other, bob.token)
        await other.goto('/app')
        await other.getByRole('button', { name: `Accept ${alice.username}'s friend request` }).click()
        await expectText(other.locator(`#friends li[data-user="${alice.id}"] .presence`), 'Online')
        const bobRow = page.locator(`#friends li[data-user="${bob.id}"]`)
        await expectText(bobRow.locator('.presence'), 'Online')
        expect(await bobRow.locator('.status-dot').getAttribute('data-status')).toBe('online')
        expect(await page.locator('#requests li').count()).toBe(0)
        await expectText(page.locator('#friends-count'), '1 online of 1')
        // Bob's game sets a status and what he plays (op 3 on another Gateway session of his): shown in words.
        const game = await GatewayClient.identified(bob.token, {}, t().port)
        game.client.send(3, {
          status: 'dnd',
          activities: [{ name: 'Chess', type: 0, state: 'In a match' }],
          since: null,
          afk: false,
        })
        await expectText(bobRow.locator('.presence'), 'Do not disturb · Playing Chess · In a match')
        expect(await bobRow.locator('.status-dot').getAttribute('data-status')).toBe('dnd')
        game.client.close()
        await page.setViewportSize({ width: 390, height: 844 })
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
        await expectNoSeriousViolations(page)
        await page.setViewportSize({ width: 1280, height: 800 })

        // Bob closes his page: offline for Alice. Then she blocks him: gone from his list, in her blocked list.
        await other.close()
        await expectText(bobRow.locator('.presence'), 'Offline', 10_000)
        await page.getByRole('button', { name: `Block ${bob.username}` }).click()
        await page.locator(`#blocked li[data-user="${bob.id}"]`).waitFor()
        await expectCount(page.locator('#friends li'), 0)
        const bobSees = await t().api('GET', '/users/@me/relationships', { token: bob.token })
        expect(bobSees.body).toEqual([])
        await page.getByRole('button', { name: `Unblock ${bob.username}` }).click()
        await expectCount(page.locator('#blocked li'), 0)
        await page.locator('#no-friends').waitFor()
      },
      45_000,
    )

    browserTest(web, 'lobby page: a stranger, and an unknown lobby, are told so and never connect', async (page) => {
      const member = await t().user()
      const stranger = await t().user()
      const app = await t().app([REDIRECT])
      const lobby = await t().api('POST', '/lobbies', {
        token: `Bot ${app.bot_token}`,
        body: { members: [{ id: member.id }] },
      })
      await signIn(page, stranger.token)
      const sockets: string[] = []
      page.on('websocket', (ws) => sockets.push(ws.url()))
      for (const id of [lobby.body.id, '123']) {
        await page.goto(`/lobbies/${id}`)
        await expectText(
          page.locator('#lobby-notice'),
          'This lobby does not exist (it may have closed after being idle), or you are not one of its members.',
        )
        expect(await page.locator('#connection').textContent()).toBe('')
        expect(await page.getByRole('button', { name: 'Join voice' }).isVisible()).toBe(false)
        expect(await page.locator('#members li').count()).toBe(0)
        await Bun.sleep(300)
        expect(await page.locator('#connection').textContent()).not.toContain('Connected')
      }
      expect(sockets.filter((url) => url.includes('/gateway'))).toEqual([])
    })
  })
}
