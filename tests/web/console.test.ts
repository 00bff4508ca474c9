// The operator console in Chromium, from source (issue 47): an operator granted by the CLI logs in with TOTP at
// /console, finds a user whose display name is HTML with bidi characters (shown as text), locks them with a reason
// while their Gateway socket is open (it closes), sees the audit row and creates an application; on a 390 px wide screen, the search driven
// from the keyboard. A visitor who is not an operator is told so.
import { describe, expect } from 'bun:test'
import { updateUser } from '../../src/accounts/store'
import { clock } from '../../src/core/clock'
import { GatewayClient } from '../gateway-client'
import { api, databaseEnv, makeUser, server } from '../helpers'
import { totpCode, userWithTotp } from '../mfa/helpers'
import { cli } from '../ops/process-helpers'
import { browserTest, expectText, signIn, useBrowser } from './browser'
import { recordUrls } from './flows'

const web = await useBrowser()

const HOSTILE = '<img src=x id=pwned>\u202Egnp.exe<script>window.pwned=1</script>'

/** The page has no horizontal scroll at its width (390 px). */
async function fitsWidth(page: import('playwright-core').Page) {
  const [scroll, width] = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as number[]
  expect(scroll).toBeLessThanOrEqual(width)
}

describe('operator console', () => {
  browserTest(
    web,
    'grant by the CLI, log in with TOTP, find a user, lock them and see their socket close; the audit row',
    async (page) => {
      await page.setViewportSize({ width: 390, height: 844 })
      const urls = recordUrls(page)
      const op = await userWithTotp()
      await server()
      const granted = await cli({ ...process.env, ...databaseEnv(), LOG_LEVEL: 'silent' }, [
        'operator',
        'grant',
        '--user',
        op.email,
      ])
      expect(granted.code).toBe(0)
      const target = await makeUser()
      // Longer than a display name may be through the API: written straight into the row.
      await updateUser(target.id, { globalName: HOSTILE })
      const { client: socket } = await GatewayClient.identified(target.token)

      await page.goto('/console')
      await page.getByLabel('E-mail or phone number').fill(op.email)
      await page.getByLabel('Password', { exact: true }).fill(op.password)
      await page.getByRole('button', { name: 'Log in', exact: true }).click()
      clock.advance(30_000)
      await page.locator('#mfa-code').fill(totpCode(op.secret))
      await page.getByRole('button', { name: 'Verify' }).click()
      await expectText(page.locator('#operator-name'), `as ${op.username}`)
      await fitsWidth(page)

      // Keyboard only: the search field, typed, Enter.
      await page.locator('#search-query').focus()
      await page.keyboard.type(target.username)
      await page.keyboard.press('Enter')
      // The first console action asks for the second factor (60003): the dialog.
      const dialog = page.locator('dialog')
      await dialog.waitFor()
      clock.advance(30_000)
      await dialog.locator('#mfa-code').fill(totpCode(op.secret))
      await page.keyboard.press('Enter')
      await expectText(page.locator('#search-status'), '1 user found')
      await page.locator('#search-results a').first().press('Enter')

      await expectText(page.locator('#user-title'), `${HOSTILE} (${target.username})`)
      // Each string isolated (<bdi>): the override in the display name stays inside its own box.
      expect(await page.locator('#user-title bdi').allTextContents()).toEqual([HOSTILE, target.username])
      // Rendered as text: no element came from the name, no script ran.
      expect(await page.locator('#pwned').count()).toBe(0)
      expect(await page.evaluate('window.pwned')).toBeUndefined()
      await fitsWidth(page)

      await page.getByLabel(/^Reason/).fill('spam wave <b>bold</b>')
      await page.getByRole('button', { name: 'Lock', exact: true }).click()
      expect((await socket.waitForClose()).code).toBe(4004)
      await expectText(page.locator('#user-notice'), 'Lock: done.')
      await expectText(page.locator('#user-facts dd').nth(4), 'locked')
      expect((await api('GET', '/users/@me', { token: target.token })).status).toBe(401)

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
      expect((await api('GET', '/applications/@me', { token: `Bot ${botToken}` })).body.name).toBe(
        'Console <i>game</i>',
      )
      await expectText(page.locator('#app-rows li strong').last(), 'Console <i>game</i>')
      await fitsWidth(page)
      // The session token never travelled in a URL.
      const token = await page.evaluate(() => JSON.parse(localStorage.getItem('token') ?? 'null') as string)
      for (const url of urls) expect(url).not.toContain(token)
    },
    60_000,
  )

  browserTest(web, 'a logged-in user who is not an operator is told so', async (page) => {
    const user = await makeUser()
    await signIn(page, user.token)
    const response = await page.goto('/console')
    expect(response?.status()).toBe(200)
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'")
    await expectText(page.locator('#refused-title'), 'No access')
  })
})
