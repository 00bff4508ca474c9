// Nothing of PostgreSQL is loaded by the SQLite server, from the source or from the binary: no module of the driver
// (`postgres`), of `drizzle-orm/postgres-js`, of our PostgreSQL side (src/db/pg/, the tables' twins with it), and no more of
// `drizzle-orm/pg-core` than drizzle-orm itself loads for SQLite (its sql.ts and relations.ts import pg-core files,
// with what those import). Nor anything of the cluster side: ioredis (with the packages only it uses) and src/cluster/.
// The binary holds both sides, reached through import() when DATABASE_URL and REDIS_URL ask for them: they are in
// chunks of their own, read and evaluated only then. Checked twice: in the bundle of src/main.ts as `bun run build`
// splits it (every chunk a SQLite server may load, against the chunks only those import()s reach), and in the modules
// a started SQLite server has loaded (Bun's require.cache, ES modules included).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { ROOT } from './schema-shape'

const PG = /(node_modules\/postgres\/|node_modules\/drizzle-orm\/postgres-js\/|src\/db\/pg\/)/
const PG_CORE = /node_modules\/drizzle-orm\/pg-core\/\S+/
// ioredis and the packages only it uses. Not `debug`, which it uses too: whether the install hoists one copy that
// other packages share (strtok3's) depends on the install, and the bundle puts it where its users are.
const CLUSTER =
  /(node_modules\/(ioredis|@ioredis\/commands|cluster-key-slot|denque|redis-errors|standard-as-callback)\/|src\/cluster\/)/
/** What the server's import()s of the two sides load: db/pg/client.ts, cluster/node.ts. */
const SIDE_ENTRY = /^src\/(db\/pg\/client\.ts|cluster\/node\.ts)$/

const dir = mkdtempSync(join(tmpdir(), 'lobby-pg-apart-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** drizzle-orm's SQLite side, all of it: what of pg-core it brings with it. */
const BASELINE = `${['drizzle-orm', 'drizzle-orm/sqlite-core', 'drizzle-orm/bun-sqlite']
  .map((name, i) => `import * as m${i} from ${JSON.stringify(Bun.resolveSync(name, ROOT))}\n`)
  .join('')}Object.assign(globalThis, { m0, m1, m2 })\n`

/** A module's path from node_modules/ on (src/ for ours), so a bundle's names and require.cache's keys compare. */
const short = (path: string) =>
  path.includes('node_modules/') ? path.replace(/^.*?(?=node_modules\/)/, '') : path.replace(/^.*?(?=src\/)/, '')

/** What the baseline loads of pg-core when it runs (every module its imports reach, none shaken off). */
function baselinePgCore(): Set<string> {
  const script = join(dir, 'baseline.ts')
  writeFileSync(script, `${BASELINE}console.log(JSON.stringify(Object.keys(require.cache)))\n`)
  const proc = Bun.spawnSync([process.execPath, script], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  expect(proc.exitCode).toBe(0)
  return new Set((JSON.parse(proc.stdout.toString()) as string[]).map(short).filter((m) => PG_CORE.test(m)))
}

/** Imports of another chunk in Bun's output: `from "./x.js"` and `import "./x.js"` (static); `import("./x.js")`. */
const STATIC = /(?:\bfrom|^import)\s*"\.\/([^"]+\.js)"/gm
const DYNAMIC = /\bimport\(\s*"\.\/([^"]+\.js)"\s*\)/g

/**
 * The bundle of src/main.ts split as the binary's build splits it (scripts/build-flags.ts: ESM, --splitting), not
 * minified, so that each chunk names its modules in comment lines (`// node_modules/x/y.js`, `// src/a/b.ts`).
 * `sqlite`: the modules of every chunk a SQLite server may load, at start or later (from the entry, every static
 * import, and every import() but the two sides' own: db/postgres-side.ts's and server.ts's cluster side's).
 * `sides`: the modules of the others.
 */
async function splitBundle(): Promise<{ sqlite: string[]; sides: string[] }> {
  const out = join(dir, 'bundle')
  const result = await Bun.build({
    entrypoints: [join(ROOT, 'src', 'main.ts')],
    target: 'bun',
    format: 'esm',
    splitting: true,
    outdir: out,
  })
  expect(result.success).toBe(true)
  const modules = new Map<string, string[]>()
  const texts = new Map<string, string>()
  for (const o of result.outputs) {
    if (!o.path.endsWith('.js')) continue
    const text = readFileSync(o.path, 'utf8')
    texts.set(basename(o.path), text)
    modules.set(
      basename(o.path),
      [...text.matchAll(/^\/\/ (\S+\.[cm]?[jt]s)$/gm)].map((m) => short(m[1])),
    )
  }
  const staticImports = (name: string) => [...texts.get(name)!.matchAll(STATIC)].map((m) => m[1])
  // An import() of one side: its chunk (or, for a facade re-exporting them, a chunk it imports) holds the module that
  // import() names. What else such a chunk holds is loaded on SQLite only if a chunk loaded there imports it
  // statically: the walk below follows every static import.
  const sideChunk = (name: string) =>
    [name, ...staticImports(name)].some((c) => modules.get(c)!.some((m) => SIDE_ENTRY.test(m)))
  const loaded = new Set<string>()
  const queue = ['main.js']
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (loaded.has(name)) continue
    loaded.add(name)
    queue.push(...staticImports(name))
    for (const m of texts.get(name)!.matchAll(DYNAMIC)) if (!sideChunk(m[1])) queue.push(m[1])
  }
  const modulesOf = (names: string[]) => [...new Set(names.flatMap((name) => modules.get(name)!))]
  return {
    sqlite: modulesOf([...loaded]),
    sides: modulesOf([...modules.keys()].filter((name) => !loaded.has(name))),
  }
}

test('the binary holds the PostgreSQL and cluster sides in chunks of their own; a SQLite server loads none of them', async () => {
  const { sqlite, sides } = await splitBundle()
  // The comment lines are there to read: the SQLite side and our own files are named.
  expect(sqlite).toContain('src/db/client.ts')
  expect(sqlite).toContain('src/server.ts')
  expect(sqlite.some((m) => m.includes('node_modules/drizzle-orm/sqlite-core/'))).toBe(true)
  expect(sqlite.filter((m) => PG.test(m))).toEqual([])
  const baseline = baselinePgCore()
  expect(baseline.size).toBeGreaterThan(0)
  expect(sqlite.filter((m) => PG_CORE.test(m) && !baseline.has(m))).toEqual([])
  expect(sqlite.filter((m) => CLUSTER.test(m))).toEqual([])
  // Both sides are in the binary.
  for (const side of [
    'src/db/pg/client.ts',
    'src/db/pg/twins.ts',
    'node_modules/postgres/src/index.js',
    'node_modules/drizzle-orm/postgres-js/driver.js',
    'src/cluster/node.ts',
    'node_modules/ioredis/built/Redis.js',
  ])
    expect(sides).toContain(side)
}, 60_000)

test('a started SQLite server has loaded nothing of the cluster side, nor of PostgreSQL beyond what drizzle-orm brings', async () => {
  const script = join(dir, 'loaded.ts')
  writeFileSync(
    script,
    `${BASELINE}
const before = Object.keys(require.cache)
const { startServer } = await import(${JSON.stringify(join(ROOT, 'src', 'server.ts'))})
const running = await startServer({ port: 0, host: '127.0.0.1', databasePath: ${JSON.stringify(join(dir, 'db.sqlite'))} })
const answer = await fetch(running.url + '/healthz')
console.log(JSON.stringify({ status: answer.status, before, after: Object.keys(require.cache) }))
await running.stop()
process.exit(0)
`,
  )
  const proc = Bun.spawn([process.execPath, script], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  expect({ code, err: code ? err : '' }).toEqual({ code: 0, err: '' })
  const { status, before, after } = JSON.parse(out.trim().split('\n').at(-1)!) as {
    status: number
    before: string[]
    after: string[]
  }
  expect(status).toBe(200)
  expect(after.some((m) => m.endsWith('src/db/client.ts'))).toBe(true)
  const baseline = new Set(before)
  expect(after.filter((m) => PG.test(m))).toEqual([])
  expect(after.filter((m) => PG_CORE.test(m) && !baseline.has(m))).toEqual([])
  expect(after.filter((m) => CLUSTER.test(m))).toEqual([])
}, 60_000)
