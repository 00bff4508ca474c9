// README's "First steps", exactly as written: the server started as its top command starts it (`bun run start`, on a
// free port with a database of its own), each command of the section run by bash in the repository (8080 is the
// test's port; USER_ID, BOT_TOKEN and LOBBY_ID what the earlier steps printed), and the pages it names opened in
// Chromium: log in with the section's e-mail and passphrase, then the lobby page.
import { expect } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { browserTest, expectText, useBrowser } from './browser'
import { freePort, type Target } from './target'

const ROOT = join(import.meta.dir, '../..')
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const section = /^## First steps\n([\s\S]*?)\n## /m.exec(readme)?.[1] ?? ''
/** The section's commands: its indented code lines, in order. */
const commands = section
  .split('\n')
  .filter((line) => /^ {4,}\S/.test(line))
  .map((line) => line.trim())
/** The addresses its prose tells the reader to open. */
const addresses = section
  .split('\n')
  .filter((line) => !/^ {4,}\S/.test(line))
  .flatMap((line) => [...line.matchAll(/http:\/\/localhost:8080\/[^\s`):,]+/g)].map((m) => m[0]))

let env: Record<string, string> = {}
let port = 0

/** `bun run start` from the repository, as the README's first command runs it. */
async function startFromReadme(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'lobby-readme-'))
  port = freePort()
  env = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    BASE_URL: `http://localhost:${port}`,
    DATABASE_PATH: join(dir, 'app.sqlite'),
    LOG_LEVEL: 'info',
  }
  const start = /^ {4}(.*bun run start)$/m.exec(readme)?.[1]
  expect(start).toContain('bun run start')
  const child = Bun.spawn(['bash', '-c', 'exec bun run start'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  let output = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const chunk of child.stderr) output += decoder.decode(chunk)
  })()
  void (async () => {
    for await (const chunk of child.stdout) output += decoder.decode(chunk)
  })()
  const deadline = Date.now() + 20_000
  while (!output.includes(' listening ')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`bun run start did not start:\n${output}`)
    await Bun.sleep(50)
  }
  const unsupported = () => Promise.reject(new Error('not used by the README test'))
  return {
    kind: 'process',
    port,
    api: unsupported,
    user: unsupported,
    app: unsupported,
    grantOperator: unsupported,
    outbox: unsupported,
    output: () => output,
    async close() {
      child.kill('SIGTERM')
      await child.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const web = await useBrowser([], startFromReadme)

/** Run one of the section's commands as written (its port and placeholders filled in); its JSON answer. */
async function run(command: string, values: Record<string, string>): Promise<any> {
  let line = command.replaceAll('localhost:8080', `localhost:${port}`)
  for (const [name, value] of Object.entries(values)) line = line.replaceAll(name, value)
  const proc = Bun.spawn(['bash', '-c', line], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  if (code !== 0) throw new Error(`${command}: exit ${code}\n${err}`)
  return JSON.parse(out)
}

browserTest(
  web,
  'README first steps: a user and an app from the CLI, log in on the page, a lobby made with the bot token, its page',
  async (page) => {
    // The section as this test knows it: three commands and the two pages to open.
    expect(commands).toHaveLength(3)
    expect(commands[0]).toContain('user create')
    expect(commands[1]).toContain('app create')
    expect(commands[2]).toStartWith('curl ')
    expect(addresses).toEqual(['http://localhost:8080/login', 'http://localhost:8080/lobbies/LOBBY_ID'])
    const email = /--email (\S+)/.exec(commands[0]!)![1]!
    const passphrase = /printf '%s\\n' '([^']+)'/.exec(commands[0]!)![1]!
    expect(section).toContain(`log in with \`${email}\` and your passphrase`)

    const user = await run(commands[0]!, {})
    const app = await run(commands[1]!, {})
    expect(user.id).toMatch(/^\d+$/)
    expect(app.bot_token).toBeString()

    await page.goto(addresses[0]!.replace('8080', String(port)))
    await page.getByLabel('E-mail or phone number').fill(email)
    await page.getByLabel('Password', { exact: true }).fill(passphrase)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.waitForURL('**/app')

    const lobby = await run(commands[2]!, { BOT_TOKEN: app.bot_token, USER_ID: user.id })
    expect(lobby.id).toMatch(/^\d+$/)
    await page.goto(addresses[1]!.replace('8080', String(port)).replace('LOBBY_ID', lobby.id))
    await expectText(page.locator('#connection'), 'Connected.')
    await expectText(page.locator(`#members li[data-user="${user.id}"] .name`), /./)
    expect(web.target.output()).not.toContain(passphrase)
  },
  60_000,
)
