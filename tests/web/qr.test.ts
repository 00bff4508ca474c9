// QR (remote) login in real browsers: the desktop's /login shows a live code, a logged-in "phone" (another browser
// profile) opens the /ra/… link the code carries and approves or denies; elevation when the phone's account has MFA;
// a logged-out phone goes through /login and back; a code that times out is replaced by a new one.
import { describe, expect } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { api, makeUser } from '../helpers'
import { totpCode, userWithTotp } from '../mfa/helpers'
import { browserTest, expectText, otherContext, signIn, storedToken, useBrowser } from './browser'

const web = await useBrowser()

/** The URL the desktop's QR code carries (the page puts it in data-qr-url), once a code is shown. */
async function qrUrl(desktop: Page, not?: string): Promise<string> {
  const code = desktop.locator(not ? `#qr-code[data-qr-url]:not([data-qr-url="${not}"])` : '#qr-code[data-qr-url]')
  await code.waitFor({ timeout: 10_000 })
  expect(await code.locator('svg').count()).toBe(1)
  return (await code.getAttribute('data-qr-url'))!
}

/** A phone: another browser profile, logged in as `token` (or logged out). */
async function phone(context: BrowserContext, token?: string): Promise<Page> {
  const page = await (await otherContext(context)).newPage()
  if (token) await signIn(page, token)
  return page
}

describe('QR login', () => {
  browserTest(
    web,
    'the phone approves: the desktop asks "log in as" with the name, then is logged in as that user',
    async (desktop, context) => {
      const user = await makeUser()
      await desktop.goto('/login')
      const url = await qrUrl(desktop)
      expect(url).toMatch(new RegExp(`^${web.base}/ra/[A-Za-z0-9_-]{43}$`))
      const desktopCode = await desktop.locator('#qr-fingerprint').textContent()

      const mobile = await phone(context, user.token)
      await mobile.goto(url)
      await mobile.getByRole('heading', { name: 'Log in on another device?' }).waitFor()
      expect(await mobile.locator('#ra-code').textContent()).toBe(desktopCode)
      expect(await mobile.locator('#ra-fingerprint').textContent()).toBe(url.split('/ra/')[1]!)
      await expectText(desktop.locator('#qr-question'), `Log in as ${user.username}?`)
      expect(await desktop.locator('.qr-user .avatar').textContent()).toBe(user.username[0]!.toUpperCase())

      await mobile.getByRole('button', { name: 'Approve' }).click()
      await mobile.getByRole('heading', { name: 'Approved' }).waitFor()
      await desktop.waitForURL('**/app')
      await expectText(desktop.locator('#me-name'), user.username)
      const token = await storedToken(desktop)
      expect(token).not.toBe(user.token)
      const me = await api('GET', '/users/@me', { token: token! })
      expect(me.status).toBe(200)
      expect(me.body.id).toBe(user.id)
    },
  )

  browserTest(
    web,
    'a logged-out phone logs in first and comes back; it denies and the desktop shows the login was cancelled',
    async (desktop, context) => {
      const user = await makeUser()
      await desktop.goto('/login')
      const url = await qrUrl(desktop)
      const path = new URL(url).pathname

      const mobile = await phone(context)
      await mobile.goto(url)
      await mobile.waitForURL(`**/login?redirect_to=${encodeURIComponent(path)}`)
      // The phone's login page explains and shows no code of its own to scan.
      await expectText(
        mobile.locator('#login-notice'),
        'Log in on this device to approve the login on your other device.',
      )
      expect(await mobile.locator('#qr-login').isHidden()).toBe(true)
      expect(await mobile.locator('#qr-code').count()).toBe(0)
      await mobile.getByLabel('E-mail or phone number').fill(user.email)
      await mobile.getByLabel('Password', { exact: true }).fill(user.password)
      await mobile.getByRole('button', { name: 'Log in', exact: true }).click()
      await mobile.waitForURL(`**${path}`)
      await expectText(mobile.locator('#ra-me'), user.username)
      await expectText(desktop.locator('#qr-question'), `Log in as ${user.username}?`)

      await mobile.getByRole('button', { name: 'Deny' }).click()
      await mobile.getByRole('heading', { name: 'Denied' }).waitFor()
      await expectText(desktop.locator('#qr-state'), 'Login cancelled')
      expect(await storedToken(desktop)).toBeNull()
      expect(new URL(desktop.url()).pathname).toBe('/login')

      // The used code is refused if opened again; the desktop offers a new one.
      await mobile.reload()
      await mobile.getByRole('heading', { name: 'This code cannot be used' }).waitFor()
      await desktop.getByRole('button', { name: 'Show a new code' }).click()
      expect(await qrUrl(desktop)).not.toBe(url)
    },
  )

  browserTest(web, 'a phone whose account has MFA approves through the elevation dialog', async (desktop, context) => {
    const user = await userWithTotp()
    await desktop.goto('/login')
    const url = await qrUrl(desktop)
    const mobile = await phone(context, user.token)
    await mobile.goto(url)
    await mobile.getByRole('button', { name: 'Approve' }).click()
    const dialog = mobile.getByRole('dialog', { name: 'Confirm it’s you' })
    await dialog.getByLabel('Six-digit code from your authenticator app').fill('000000')
    await dialog.getByRole('button', { name: 'Verify' }).click()
    await expectText(dialog.locator('#mfa-code-error'), 'Invalid two-factor code')
    expect(await desktop.locator('#qr-question').count()).toBe(1) // still waiting
    await dialog.getByLabel('Six-digit code from your authenticator app').fill(totpCode(user.secret))
    await dialog.getByRole('button', { name: 'Verify' }).click()
    await mobile.getByRole('heading', { name: 'Approved' }).waitFor()
    await desktop.waitForURL('**/app')
    const token = await storedToken(desktop)
    expect((await api('GET', '/users/@me', { token: token! })).body.id).toBe(user.id)
  })

  browserTest(web, 'the code is replaced by a new one when its socket times out', async (desktop) => {
    await desktop.goto('/login')
    const first = await qrUrl(desktop)
    clock.advance(config().remoteAuthTimeoutMs + 1) // the server's sweeper closes the socket (4003)
    const second = await qrUrl(desktop, first)
    expect(second).not.toBe(first)
  })
})
