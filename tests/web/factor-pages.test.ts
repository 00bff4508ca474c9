// The settings page's second-factor sections come from the registry (issue 29, "factors as a registry"): each
// factor's page.ts builds its section, the page shows one per registered factor in FACTORS' order, and the code the
// pages' scripts reach is browser code only (a page.ts that imported its factor's store would pull bun:sqlite and
// Drizzle toward the browser bundle).
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { FACTORS } from '../../src/mfa/factors'
import { makeUser } from '../helpers'
import { browserTest, expectText, signIn, useBrowser } from './browser'

const ROOT = join(import.meta.dir, '../..')
const PAGES = join(ROOT, 'src/web/pages')

/** Browser code: the files the server's tsconfig leaves to the pages' own (web/pages, the factors' page code). */
const browserGlobs = (JSON.parse(await Bun.file(join(ROOT, 'tsconfig.json')).text()).exclude as string[]).map(
  (pattern) => new Bun.Glob(pattern.endsWith('.ts') ? pattern : `${pattern}/**`),
)
// The SDK the pages bundle (client/src) is browser code too: its own tsconfig gives it the DOM and no Bun or Node types.
const isBrowserCode = (rel: string) => rel.startsWith('client/src/') || browserGlobs.some((glob) => glob.match(rel))

/** Every file of ours the pages' scripts import, transitively, with what each imports that is not browser code. */
function walk(): { reached: Set<string>; problems: string[] } {
  const transpiler = new Bun.Transpiler({ loader: 'ts' })
  const entries = [...new Bun.Glob('*.ts').scanSync(PAGES)].map((name) => join(PAGES, name))
  const reached = new Set<string>()
  const problems: string[] = []
  const visit = (file: string) => {
    if (reached.has(file)) return
    reached.add(file)
    const from = relative(ROOT, file)
    if (file.endsWith('.d.ts')) return
    for (const { path } of transpiler.scanImports(readFileSync(file, 'utf8'))) {
      if (/^(bun|node):/.test(path)) problems.push(`${from} imports ${path}`)
      if (!path.startsWith('.')) continue
      const target = Bun.resolveSync(path, dirname(file))
      const rel = relative(ROOT, target)
      if (!isBrowserCode(rel)) problems.push(`${from} imports ${rel}, which is not browser code`)
      else visit(target)
    }
  }
  for (const entry of entries) visit(entry)
  return { reached, problems }
}

describe('the pages reach browser code only', () => {
  test("from every page's script, each module of ours it imports is browser code, and none is bun: or node:", () => {
    const { reached, problems } = walk()
    expect(problems).toEqual([])
    // The walk does reach the factors' sections, through the list the settings page reads: one per factor.
    const factorPages = [...reached].filter((file) => /\/src\/mfa\/factors\/[^/]+\/page\.ts$/.test(file))
    expect(factorPages).toHaveLength(FACTORS.length)
  })
})

const web = await useBrowser()

describe('settings', () => {
  browserTest(
    web,
    'a section per registered factor, in the registry’s order, between e-mail and sessions',
    async (page) => {
      const user = await makeUser()
      await signIn(page, user.token)
      await page.goto('/settings/security')
      await expectText(page.locator('#me-name'), user.username)
      const sections = await page
        .locator('#settings section')
        .evaluateAll((all) => all.map((s) => s.getAttribute('data-factor') ?? s.id))
      expect(sections).toEqual([
        'password-section',
        'email-section',
        ...FACTORS.map((f) => f.type),
        'sessions-section',
        'apps-section',
      ])
      // Without MFA the backup codes' section is hidden; the strong factors offer their enrolment.
      expect(await page.locator('section[data-factor="backup"]').isVisible()).toBe(false)
      await page.getByRole('button', { name: 'Enable authenticator app' }).waitFor()
      await page.getByRole('button', { name: 'Add a security key or passkey' }).waitFor()
    },
  )
})
