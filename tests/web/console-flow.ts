// The operator console as an operator clicks through it (issue 47), written against a Target (target.ts) so that it
// runs on the server from source (console.test.ts) and on the compiled binary (binary.test.ts): an operator granted
// by the CLI logs in at /console with TOTP, finds a user whose display name is HTML with a bidi override (shown as
// text, isolated), locks them with a reason while their Gateway socket is open (it closes), sees the audit row and
// creates an application; on a 390 px wide screen, the search driven from the keyboard. The real clock: the login
// takes the next TOTP step, the elevation a backup code. A user who is not an operator is told so.
import { describe, expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { GatewayClient } from '../gateway-client'
import { newSecret } from '../mfa/helpers'
import { browserTest, expectText, signIn, type Web } from './browser'
import { recordUrls, totpAt } from './flows'

/** HTML and a right-to-left override, within a display name's length. */
const HOSTILE = '<img src=x id=pwned>\u202Egnp.exe'

/** The page has no horizontal scroll at its width (390 px). */
async function fitsWidth(page: Page) {
  const [scroll, width] = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as number[]
  expect(scroll).toBeLessThanOrEqual(width)
}

export function consoleFlows(web: Web): void {
  const t = () => web.target

  describe('operator console', () => {
    browserTest(
      web,
      'console: grant by the CLI, log in with TOTP, find a user, lock them and see their socket close; audit; an app',
      async (page) => {
        await page.setViewportSize({ width: 390, height: 844 })
        const urls = recordUrls(page)
        const op = await t().user()
        const secret = newSecret()
        const enabled = await t().api('POST', '/users/@me/mfa/totp/enable', {
          token: op.token,
          body: { secret, code: totpAt(secret), password: op.password },
        })
        expect(enabled.status).toBe(200)
        const backup = (enabled.body.backup_codes as { code: string }[]).map((c) => c.code)
        await t().grantOperator(op.email)
        const target = await t().user()
        const named = await t().api('PATCH', '/users/@me', { token: target.token, body: { global_name: HOSTILE } })
        expect(named.status).toBe(200)
        const { client: socket } = await GatewayClient.identified(target.token, {}, t().port)

        await page.goto('/console')
        await page.getByLabel('E-mail or phone number').fill(op.email)
        await page.getByLabel('Password', { exact: true }).fill(op.password)
        await page.getByRole('button', { name: 'Log in', exact: true }).click()
        await page.locator('#mfa-code').fill(totpAt(secret, 1))
        await page.getByRole('button', { name: 'Verify' }).click()
        await expectText(page.locator('#operator-name'), `as ${op.username}`)
        await fitsWidth(page)

        // Keyboard only: the search field, typed, Enter.
        await page.locator('#search-query').focus()
        await page.keyboard.type(target.username)
        await page.keyboard.press('Enter')
        // The first console request asks for a second factor (60003): the dialog, answered with a backup code.
        const dialog = page.locator('dialog')
        await dialog.waitFor()
        await dialog.locator('#mfa-method-backup').check()
        await dialog.locator('#mfa-code').fill(backup[0]!)
        await page.keyboard.press('Enter')
        await expectText(page.locator('#search-status'), '1 user found')
        await page.locator('#search-results a').first().press('Enter')

        await expectText(page.locator('#user-title'), `${HOSTILE} (${target.username})`)
        // Each string isolated (<bdi>): the override in the display name stays inside its own box.
        expect(await page.locator('#user-title bdi').allTextContents()).toEqual([HOSTILE, target.username])
        // Rendered as text: no element came from the name.
        expect(await page.locator('#pwned').count()).toBe(0)
        await fitsWidth(page)

        await page.getByLabel(/^Reason/).fill('spam wave <b>bold</b>')
        await page.getByRole('button', { name: 'Lock', exact: true }).click()
        expect((await socket.waitForClose()).code).toBe(4004)
        await expectText(page.locator('#user-notice'), 'Lock: done.')
        await expectText(page.locator('#user-facts dd').nth(4), 'locked')
        expect((await t().api('GET', '/users/@me', { token: target.token })).status).toBe(401)

        await page.getByRole('link', { name: 'Audit log' }).click()
        const row = page.locator('#audit-rows li').first()
        await expectText(row.locator('strong'), 'user.lock')
        expect(await row.textContent()).toContain('Reason: spam wave <b>bold</b>')
        await fitsWidth(page)

        await page.getByRole('link', { name: 'Applications' }).click()
        await page.getByLabel('Name', { exact: true }).fill('Console <i>game</i>')
        await page.getByLabel(/^Redirect URIs/).fill('https://game.example/cb')
        await page.getByRole('button', { name: 'Create' }).click()
        await page.locator('#app-created').waitFor()
        const botToken = (await page.locator('#app-secrets code').first().textContent()) ?? ''
        const app = await t().api('GET', '/applications/@me', { token: `Bot ${botToken}` })
        expect(app.body.name).toBe('Console <i>game</i>')
        await expectText(page.locator('#app-rows li strong').last(), 'Console <i>game</i>')
        await fitsWidth(page)
        // The session token never travelled in a URL.
        const token = (await page.evaluate("JSON.parse(localStorage.getItem('token') ?? 'null')")) as string
        for (const url of urls) expect(url).not.toContain(token)
      },
      60_000,
    )

    browserTest(web, 'console: a logged-in user who is not an operator is told so', async (page) => {
      const user = await t().user()
      await signIn(page, user.token)
      const response = await page.goto('/console')
      expect(response?.status()).toBe(200)
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'")
      await expectText(page.locator('#refused-title'), 'No access')
    })
  })
}
