// Nothing of PostgreSQL is loaded by the SQLite server or built into the binary: no module of the driver
// (`postgres`), of `drizzle-orm/postgres-js`, of our PostgreSQL side (tables.pg.ts, src/db/pg/), and no more of
// `drizzle-orm/pg-core` than drizzle-orm itself drags in for SQLite (its sql.ts and relations.ts import three pg-core
// files, with what those import). Checked twice: in the bundle of src/main.ts (what `bun run build` compiles, every
// chunk), and in the modules a started SQLite server has loaded (Bun's require.cache, ES modules included).
// Nor anything of the cluster side: ioredis (with the packages only it uses) and src/cluster/.
// When the server learns DATABASE_URL and REDIS_URL, it reaches those sides through import(): the second check keeps
// holding for SQLite, and the first should then look only at chunks that import() does not lead to.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './schema-shape'

const PG =
  /(node_modules\/postgres\/|node_modules\/drizzle-orm\/postgres-js\/|src\/(.*\/)?tables\.pg\.ts|src\/db\/pg\/)/
const PG_CORE = /node_modules\/drizzle-orm\/pg-core\/\S+/
const CLUSTER =
  /(node_modules\/(ioredis|@ioredis\/commands|cluster-key-slot|denque|redis-errors|standard-as-callback)\/|src\/cluster\/)/

const dir = mkdtempSync(join(tmpdir(), 'lobby-pg-apart-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** drizzle-orm's SQLite side, all of it (a bundle keeps what is used): what of pg-core it brings with it. */
const BASELINE = `${['drizzle-orm', 'drizzle-orm/sqlite-core', 'drizzle-orm/bun-sqlite']
  .map((name, i) => `import * as m${i} from ${JSON.stringify(Bun.resolveSync(name, ROOT))}\n`)
  .join('')}Object.assign(globalThis, { m0, m1, m2 })\n`

async function bundledModules(entry: string, out: string): Promise<string[]> {
  const result = await Bun.build({ entrypoints: [entry], target: 'bun', format: 'esm', splitting: true, outdir: out })
  expect(result.success).toBe(true)
  const texts = await Promise.all(result.outputs.filter((o) => o.path.endsWith('.js')).map((o) => o.text()))
  // An unminified bundle names each module it holds in a comment line: `// node_modules/x/y.js`, `// src/a/b.ts`.
  const named = texts.flatMap((text) => [...text.matchAll(/^\/\/ (\S+\.[cm]?[jt]s)$/gm)].map((m) => m[1]))
  // Paths are relative to the entry's folder: keep them from node_modules/ on, so two builds compare.
  return [...new Set(named.map((path) => path.replace(/^(\.\.\/)*(.*?\/)?(?=node_modules\/)/, '')))]
}

test('the bundle of src/main.ts holds nothing of the cluster side, nor of PostgreSQL beyond what drizzle-orm brings for SQLite', async () => {
  writeFileSync(join(dir, 'baseline.ts'), BASELINE)
  const baseline = new Set(
    (await bundledModules(join(dir, 'baseline.ts'), join(dir, 'b1'))).filter((m) => PG_CORE.test(m)),
  )
  const modules = await bundledModules(join(ROOT, 'src', 'main.ts'), join(dir, 'b2'))
  // The comment lines are there to read: the SQLite side and our own files are named.
  expect(modules).toContain('src/db/client.ts')
  expect(modules.some((m) => m.includes('node_modules/drizzle-orm/sqlite-core/'))).toBe(true)
  expect(modules.filter((m) => PG.test(m))).toEqual([])
  expect(modules.filter((m) => PG_CORE.test(m) && !baseline.has(m))).toEqual([])
  expect(modules.filter((m) => CLUSTER.test(m))).toEqual([])
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
