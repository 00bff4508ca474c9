// The whole suite on both databases (`bun run test`): on SQLite, and again on PostgreSQL (TEST_DATABASE=postgres:
// tests/db/postgres.ts starts a server of its own in each test process). Each pass runs as shards, `bun test`
// processes side by side with a share of the files each, all at once: the suite mostly waits (timers, sockets, child
// processes, a browser), so four processes on two cores end far sooner than two (bench/RESULTS.md, "The suite on both
// databases"). Files are dealt to the shards by their measured times (tests/timings.json, ms, the longest first, each to
// the shard with the least so far), so the shards end together. A shard is a plain `bun test` process: one global for
// its files, as a serial run, and its PostgreSQL server stopped after its last file (tests/preload.ts).
//
// Each shard's output is printed whole when it ends, then one line per shard; exit 1 if any failed.
//   bun run scripts/test-both.ts [bun test flags] [paths]   paths: only the files under them
//   TEST_SHARDS=3 ...                                         shards per database (default 2)
//   TEST_DATABASES=postgres ...                               one pass only (sqlite, postgres, or both: the default)
//   ... --update-timings                                      write the files' measured times to tests/timings.json
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

type Db = 'sqlite' | 'postgres'
type Timings = Record<Db, Record<string, number>>
const TIMINGS = 'tests/timings.json'

const args = process.argv.slice(2)
const update = args.includes('--update-timings')
// A path is an argument that names a file or folder; the rest (`--timeout 20000` too) go to `bun test` as they are.
const isPath = (a: string) => !a.startsWith('-') && existsSync(a)
const flags = args.filter((a) => !isPath(a) && a !== '--update-timings')
const paths = args.filter(isPath).map((p) => p.replace(/^\.\//, '').replace(/\/$/, ''))
const shardsPerDb = Math.max(1, Number(process.env.TEST_SHARDS ?? 2))
const dbs = (process.env.TEST_DATABASES ?? 'sqlite,postgres').split(',').filter(Boolean) as Db[]

const files = [...new Bun.Glob('tests/**/*.test.ts').scanSync()]
  .filter((f) => !paths.length || paths.some((p) => f === p || f.startsWith(`${p}/`)))
  .sort()
if (!files.length) {
  console.error(`no test files under ${paths.join(', ')}`)
  process.exit(1)
}
const timings: Timings = existsSync(TIMINGS) ? JSON.parse(readFileSync(TIMINGS, 'utf8')) : { sqlite: {}, postgres: {} }

// A file whose first line says `// suite: one pass` runs the same whichever pass runs it (tests/cluster/'s nodes are
// processes on PostgreSQL in both): with both passes it runs once, in whichever shard of either has the least so far.
const onePass = new Set(files.filter((f) => /^\/\/ suite: one pass/.test(readFileSync(f, 'utf8'))))

type Shard = { db: Db; index: number; of: number; files: string[]; timingsFile: string; ms: number }
const dir = mkdtempSync(join(tmpdir(), 'lobby-test-both-'))
const perDb = Math.min(shardsPerDb, files.length)
const shards: Shard[] = dbs.flatMap((db) =>
  Array.from({ length: perDb }, (_, i) => ({
    db,
    index: i + 1,
    of: perDb,
    files: [] as string[],
    timingsFile: join(dir, `${db}-${i + 1}.json`),
    ms: 0,
  })),
)

/**
 * Longest first, each file to the shard with the least time so far (of its pass, or of either for a one-pass file);
 * a file not measured yet counts as its pass's median.
 */
const medians = Object.fromEntries(
  dbs.map((db) => {
    const known = Object.values(timings[db] ?? {}).sort((a, b) => a - b)
    return [db, known[Math.floor(known.length / 2)] ?? 1000]
  }),
) as Record<Db, number>
const cost = (db: Db, f: string) => timings[db]?.[f] ?? medians[db]
const work = files.flatMap((f) =>
  onePass.has(f) && dbs.length > 1
    ? [{ f, dbs, ms: Math.min(...dbs.map((db) => cost(db, f))) }]
    : dbs.map((db) => ({ f, dbs: [db], ms: cost(db, f) })),
)
for (const { f, dbs: eligible, ms } of work.sort((a, b) => b.ms - a.ms)) {
  const least = shards.filter((s) => eligible.includes(s.db)).reduce((a, b) => (b.ms < a.ms ? b : a))
  least.files.push(f)
  least.ms += ms
}

function environment(db: Db): Record<string, string | undefined> {
  const env = { ...process.env }
  if (db === 'postgres') env.TEST_DATABASE = 'postgres'
  else delete env.TEST_DATABASE
  return env
}

const began = performance.now()
// A shard dealt nothing runs nothing (`bun test` with no paths would run every file).
const running = shards.filter((s) => s.files.length > 0)
for (const s of running) console.log(`==> ${s.db} ${s.index}/${s.of}: ${s.files.length} files`)
const results = await Promise.all(
  running.map(async (shard) => {
    // One stream, as a terminal would show it: bun test writes its results to stderr and console.log to stdout.
    const command = ['bun', 'test', ...flags, `--timings=${shard.timingsFile}`, '--update-timings', ...shard.files]
    const proc = Bun.spawn(['sh', '-c', 'exec "$@" 2>&1', 'sh', ...command], {
      env: environment(shard.db),
      stdout: 'pipe',
    })
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    const seconds = (performance.now() - began) / 1000
    const name = `${shard.db} ${shard.index}/${shard.of}`
    process.stdout.write(`\n==> ${name}: ${shard.files.length} files, ${seconds.toFixed(0)} s, exit ${code}\n${out}`)
    const summary = out.match(/^ *(\d+) pass$[\s\S]*?^ *(\d+) fail$/m)
    return { name, code, seconds, pass: summary?.[1] ?? '?', fail: summary?.[2] ?? '?', shard }
  }),
)

console.log(`\n==> the suite on ${dbs.join(' and ')}, ${((performance.now() - began) / 1000).toFixed(0)} s in all`)
for (const r of results)
  console.log(
    `${r.name.padEnd(14)} ${String(r.shard.files.length).padStart(3)} files ${r.seconds.toFixed(0).padStart(5)} s  ${r.pass} pass, ${r.fail} fail${r.code ? `, exit ${r.code}` : ''}`,
  )

if (update) {
  for (const { shard } of results)
    if (existsSync(shard.timingsFile)) {
      const measured = JSON.parse(readFileSync(shard.timingsFile, 'utf8')).files as Record<string, number>
      timings[shard.db] = { ...timings[shard.db], ...measured }
    }
  const all = new Set(new Bun.Glob('tests/**/*.test.ts').scanSync())
  for (const db of dbs)
    timings[db] = Object.fromEntries(
      Object.entries(timings[db])
        .filter(([f]) => all.has(f))
        .sort(([, a], [, b]) => b - a),
    )
  writeFileSync(TIMINGS, `${JSON.stringify(timings, null, 2)}\n`)
  console.log(`measured times written to ${TIMINGS}`)
}
rmSync(dir, { recursive: true, force: true })
process.exit(results.some((r) => r.code !== 0) ? 1 : 0)
