// Browser tests: playwright-core driving Debian's Chromium (CHROMIUM_PATH or /usr/bin/chromium), headless, one
// browser per test file, a fresh context (profile) per test. The server (the shared test server, or another target:
// target.ts) is reached as http://localhost:<port> and the shared server's WEB_URL is pointed there: WebAuthn
// refuses an IP address as relying party.
// A failing test leaves a screenshot of each of its pages under test-artifacts/ (TEST_ARTIFACTS; the path is
// printed), a folder CI keeps.
import { afterAll, beforeEach, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { config, setConfig } from '../../src/config'
import { readOutbox } from '../../src/delivery'
import { resetWorld } from '../helpers'
import { sourceTarget, type Target } from './target'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// Without these a headless Chromium on a closed network stalls on its background services.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A fake microphone, granted without asking, and calls over loopback: the lobby page's voice in a test. */
export const FAKE_MEDIA = [
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  '--allow-loopback-in-peer-connection',
]

export type Web = { browser: Browser; base: string; shots: string; target: Target }

/** Where failing browser tests leave their screenshots. */
export const ARTIFACTS = process.env.TEST_ARTIFACTS ?? join(import.meta.dir, '../../test-artifacts')

/**
 * Launch the file's browser (with any extra Chromium flags) for its tests: awaited at the file's top level, not in a
 * hook. bun test 1.4.5 kills every process a file's hooks and tests started when one of its tests times out, or when
 * a stale timer says one did (oven-sh/bun#38774: "killed 2 dangling processes" took the browser and the binary's
 * server down in the middle of a CI run); what a file starts at its top level is not tracked. The target is the
 * shared test server (its WEB_URL pointed at localhost, and back after) unless another is given (the compiled binary:
 * target.ts).
 */
export async function useBrowser(extraArgs: string[] = [], target: () => Promise<Target> = sourceTarget): Promise<Web> {
  const web = {} as Web
  let previousWebUrl: string | undefined
  afterAll(async () => {
    await web.browser?.close()
    await web.target?.close()
    if (previousWebUrl !== undefined) setConfig({ ...config(), webUrl: previousWebUrl })
  })
  beforeEach(() => resetWorld())
  // Building and starting the binary takes seconds (more on a busy machine).
  web.target = await target()
  web.base = `http://localhost:${web.target.port}`
  if (web.target.kind === 'source') {
    previousWebUrl = config().webUrl
    setConfig({ ...config(), webUrl: web.base })
  }
  web.shots = ARTIFACTS
  // Playwright gives every launch a fresh temporary user-data-dir.
  web.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...ARGS, ...extraArgs] })
  return web
}

type Body = (page: Page, context: BrowserContext) => Promise<void>

/** Watch a page for CSP refusals and script errors; the list fills as they happen. */
function watchPage(p: Page, problems: string[]): void {
  p.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text())
  })
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  // A script or style the page names that does not load (a chunk path nobody serves) breaks the page silently.
  p.on('response', (r) => {
    const type = r.request().resourceType()
    if (r.status() >= 400 && (type === 'script' || type === 'stylesheet'))
      problems.push(`${r.status()} ${type} ${r.url()}`)
  })
}

/** A test with its own browser context; on failure every page it opened is photographed. No CSP violation may occur. */
export function browserTest(web: Web, name: string, body: Body, timeout = 30_000): void {
  test(
    name,
    async () => {
      const context = await web.browser.newContext({ baseURL: web.base })
      const page = await context.newPage()
      const problems: string[] = []
      const contexts = [context]
      watchPage(page, problems)
      context.on('page', (p) => watchPage(p, problems))
      // Contexts the test opens itself (another person's browser) are watched, photographed and closed the same way.
      const opened = async (options?: Parameters<Browser['newContext']>[0]) => {
        const other = await web.browser.newContext({ baseURL: web.base, ...options })
        other.on('page', (p) => watchPage(p, problems))
        contexts.push(other)
        return other
      }
      extraContexts.set(context, opened)
      try {
        await body(page, context)
        if (problems.length) throw new Error(`browser reported:\n${problems.join('\n')}`)
      } catch (error) {
        const slug = `${web.target.kind}-${name}`
          .replace(/[^a-z0-9]+/gi, '-')
          .toLowerCase()
          .slice(0, 60)
        let n = 0
        mkdirSync(web.shots, { recursive: true })
        for (const p of contexts.flatMap((c) => c.pages())) {
          const file = join(web.shots, `${slug}-${++n}.png`)
          if (
            await p.screenshot({ path: file, fullPage: true }).then(
              () => true,
              () => false,
            )
          )
            console.error(`screenshot: ${file} (${p.url()})`)
        }
        if (problems.length) console.error(problems.join('\n'))
        throw error
      } finally {
        extraContexts.delete(context)
        for (const c of contexts) await c.close()
      }
    },
    timeout,
  )
}

const extraContexts = new Map<
  BrowserContext,
  (options?: Parameters<Browser['newContext']>[0]) => Promise<BrowserContext>
>()

/** Another browser profile for the same test (a second person or device), closed with the test's own context. */
export async function otherContext(
  context: BrowserContext,
  options?: Parameters<Browser['newContext']>[0],
): Promise<BrowserContext> {
  const open = extraContexts.get(context)
  if (!open) throw new Error('otherContext: not inside a browserTest')
  return open(options)
}

/** Put a session token where the pages look for it (localStorage "token", JSON-encoded as Discord does). */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.goto('/login')
  await page.evaluate((t) => localStorage.setItem('token', JSON.stringify(t)), token)
}

export async function storedToken(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const raw = localStorage.getItem('token')
    return raw ? (JSON.parse(raw) as string) : null
  })
}

/** The newest link to `path` mailed to an address, as the full URL the e-mail carries. */
export async function mailedLink(to: string, path: string): Promise<string> {
  const [message] = await readOutbox(to)
  const match = new RegExp(`https?://\\S+/${path}[#/]\\S+`).exec(message?.body ?? '')
  if (!match) throw new Error(`no ${path} link mailed to ${to}: ${message?.body}`)
  return match[0]
}

/** Wait until the element's text is `expected` (or matches it); fails with the text it had. */
export async function expectText(locator: Locator, expected: string | RegExp, timeout = 5_000): Promise<void> {
  const deadline = Date.now() + timeout
  let actual: string | null = null
  for (;;) {
    actual =
      (await locator.textContent({ timeout: Math.max(1, deadline - Date.now()) }).catch(() => null))?.trim() ?? null
    if (actual !== null && (typeof expected === 'string' ? actual === expected : expected.test(actual))) return
    if (Date.now() > deadline)
      throw new Error(`expected ${locator} to have text ${expected}, had ${JSON.stringify(actual)}`)
    await Bun.sleep(50)
  }
}

/** Wait until `locator` matches exactly `count` elements. */
export async function expectCount(locator: Locator, count: number, timeout = 5_000): Promise<void> {
  const deadline = Date.now() + timeout
  for (;;) {
    const actual = await locator.count()
    if (actual === count) return
    if (Date.now() > deadline) throw new Error(`expected ${locator} to match ${count} elements, matched ${actual}`)
    await Bun.sleep(50)
  }
}
