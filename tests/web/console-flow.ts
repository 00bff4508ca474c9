// The operator console as an operator clicks through it (issue 47), written against a Target (target.ts) so that it
// runs on the server from source (console.test.ts) and on the compiled binary (binary.test.ts): an operator granted
// by the CLI logs in at /console with TOTP, finds a user whose display name is HTML with a bidi override (shown as
// text, isolated), locks them with a reason while their Gateway socket is open (it closes), sees the audit row and
// creates an application, rotates its bot token, closes its live lobby, edits an experiment and previews a bucket,
// opens the dashboard; on a 390 px wide screen, the search driven from the keyboard. The real clock: the login
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
        await moreSections(page, botToken)
        // The session token never travelled in a URL.
        const token = (await page.evaluate("JSON.parse(localStorage.getItem('token') ?? 'null')")) as string
        for (const url of urls) expect(url).not.toContain(token)
      },
      60_000,
    )

    /**
     * The sections after the first: the application's page (a new bot token, the name typed; the old token refused
     * at once), its live lobby closed (its member's socket gets LOBBY_DELETE), an experiment edited (a problem shown
     * at its line, then saved) and a bucket previewed, the dashboard. Same page and elevation as above.
     */
    async function moreSections(page: Page, botToken: string) {
      const member = await t().user()
      const lobby = await t().api('POST', '/lobbies', {
        token: `Bot ${botToken}`,
        body: { members: [{ id: member.id }], metadata: { mode: '<b>ranked</b>' } },
      })
      expect(lobby.status).toBe(201)
      const { client: memberSocket } = await GatewayClient.identified(member.token, {}, t().port)
      const sent = await t().api('POST', `/lobbies/${lobby.body.id}/messages`, {
        token: `Bot ${botToken}`,
        body: { content: 'Match starts in 30 s <script>x()</script>' },
      })
      await t().api('PUT', `/lobbies/${lobby.body.id}/messages/${sent.body.id}/moderation-metadata`, {
        token: `Bot ${botToken}`,
        body: { verdict: 'clean' },
      })

      await page.locator('#app-rows a').last().click()
      await expectText(page.locator('#lobbies-status'), '1 lobby')
      page.once('dialog', (d) => void d.accept('Console <i>game</i>'))
      await page.getByRole('button', { name: 'New bot token' }).click()
      await page.locator('#rotated').waitFor()
      const fresh = (await page.locator('#rotated-secret code').textContent()) ?? ''
      expect((await t().api('GET', '/applications/@me', { token: `Bot ${botToken}` })).status).toBe(401)
      expect((await t().api('GET', '/applications/@me', { token: `Bot ${fresh}` })).status).toBe(200)
      await fitsWidth(page)

      await page.locator('#lobby-rows a').first().click()
      await expectText(page.locator('#lobby-members li bdi').first(), member.username)
      const said = (await page.locator('#lobby-messages').textContent()) ?? ''
      for (const part of [': Match starts in 30 s <script>x()</script>', 'Moderation: verdict=clean'])
        expect(said).toContain(part)
      expect(await page.locator('#lobby-facts').textContent()).toContain('mode=<b>ranked</b>')
      // The README's picture (CONSOLE_SCREENSHOT=docs/console.png bun test tests/web/console.test.ts).
      const shot = process.env.CONSOLE_SCREENSHOT
      if (shot) {
        await page.setViewportSize({ width: 900, height: 760 })
        await page.screenshot({ path: shot })
        await page.setViewportSize({ width: 390, height: 844 })
      }
      page.once('dialog', (d) => void d.accept())
      await page.getByRole('button', { name: 'Close lobby' }).click()
      expect((await memberSocket.waitFor('LOBBY_DELETE')).d).toEqual({ id: lobby.body.id, reason: 'deleted' })
      await expectText(page.locator('#lobby-notice'), 'Closed: its members were told.')
      await fitsWidth(page)
      memberSocket.close()

      await page.getByRole('link', { name: 'Experiments' }).click()
      await expectText(page.locator('#experiments-saved'), /^Version \d+\.$/)
      const definition = (e: number) => [
        {
          name: 'console_flow',
          kind: 'user',
          revision: 1,
          populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e }] }] }],
        },
      ]
      const bad = JSON.stringify(definition(10_000), null, 2)
      await page.locator('#experiments-file').fill(bad)
      await page.getByRole('button', { name: 'Save and load' }).click()
      const line = bad.split('\n').findIndex((l) => l.includes('"e": 10000')) + 1
      await expectText(page.locator('#experiments-problems li button'), `Line ${line}`)
      expect(await page.locator('#experiments-problems li').textContent()).toContain('rollout[0].e: must be ≤ 9999')
      await page.locator('#experiments-file').fill(JSON.stringify(definition(9999), null, 2))
      await page.getByRole('button', { name: 'Save and load' }).click()
      await expectText(page.locator('#experiments-saved'), /^Loaded 1 experiments/)
      await page.locator('#preview-id').fill(member.id)
      await page.getByRole('button', { name: 'Preview' }).click()
      await expectText(page.locator('#preview-result'), /^Bucket 1: population 0, rollout position \d+\.$/)
      await fitsWidth(page)

      await page.getByRole('link', { name: 'Dashboard' }).click()
      await expectText(page.locator('#dashboard-stats dt').first(), 'Users')
      expect(await page.locator('#dashboard-chart svg polyline').count()).toBe(1)
      await fitsWidth(page)
    }

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
