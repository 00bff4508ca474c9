// The shape of src/, checked in CI (.ci/run) and by `bun run check:structure`:
// - floors: a folder (or root file) imports only from lower floors, never from its own floor or above, so no import
//   circle can form between folders; an unknown folder fails until it is given a floor here and in docs/DESIGN.md;
// - errors: `new ApiError(` only in core/errors.ts and the domains' errors.ts;
// - queries: `db()` and query builders only in store files, `store.ts` and a domain's `<part>-store.ts` (and db/
//   itself); another domain's tables only in tables.ts (foreign keys);
// - ip-keys: a limit counts a client address only through core/ip-key.ts (IPv6 by /64): every rate-limit slot of an
//   address is made by perIp(...), a Map or Set keyed by addresses is keyed by IpKey, and no other file makes a /64;
// - postgresql: the PostgreSQL side (db/pg/, with the tables' PostgreSQL twins, and the packages `postgres` and `drizzle-orm/pg-core`,
//   `drizzle-orm/postgres-js`) is imported statically only by the PostgreSQL side and the cluster side, so none of it
//   is loaded by the SQLite server or the binary (tests/db/pg-apart.test.ts checks the bundle too); an `import()` may
//   reach it;
// - cluster: the cluster side (cluster/, the package `ioredis`) likewise, imported statically only by itself.
// Prints every finding and exits 1 when there is one.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

/** Bottom up. Keep in step with the drawing in docs/DESIGN.md. */
export const FLOORS: string[][] = [
  ['core', 'geo', 'types.d.ts', 'version.ts'],
  ['config.ts', 'db'],
  ['delivery', 'http'],
  ['gateway'],
  ['domain.ts', 'cluster'],
  ['accounts'],
  ['usernames', 'oauth2', 'guilds', 'relationships'],
  ['auth', 'mfa', 'lobbies', 'experiments', 'commands', 'installs'],
  ['voice', 'remote-auth', 'web', 'provisional', 'admin', 'dms'],
  ['modules.ts', 'cli.ts'],
  ['housekeeping.ts', 'metrics.ts', 'app.ts'],
  ['server.ts'],
  ['main.ts'],
]

const ROOT = normalize(join(import.meta.dir, '..'))
const SRC = join(ROOT, 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** The part of the house a file belongs to: its top folder under src/, or the root file itself. */
function unitOf(file: string): string {
  const [first] = relative(SRC, file).split('/')
  return first
}

const IMPORT =
  /^\s*(import|export)\b(\s+type\b)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm

type Import = { specifier: string; typeOnly: boolean; dynamic: boolean }

function importsOf(text: string): Import[] {
  const out: Import[] = []
  for (const m of text.matchAll(IMPORT))
    out.push({ specifier: m[3] ?? m[4] ?? m[5], typeOnly: m[2] !== undefined, dynamic: m[5] !== undefined })
  return out
}

const TABLES = /(^|\/)tables(\.ts)?$/
const PG_PACKAGE = /^(postgres|drizzle-orm\/(pg-core|postgres-js))(\/|$)/

/** A file of the PostgreSQL side: anything under db/pg/ (paths relative to src/). */
export function isPgFile(rel: string): boolean {
  return /^db\/pg(\/|$)/.test(rel)
}

const REDIS_PACKAGE = /^ioredis(\/|$)/

/** A file of the cluster side (several nodes on PostgreSQL and Redis): anything under cluster/. */
export function isClusterFile(rel: string): boolean {
  return /^cluster(\/|$)/.test(rel)
}

/**
 * Where the file `rel` of src/ loads the PostgreSQL or the cluster side with a static import (exported for
 * tests/core/structure.test.ts). Type-only imports are erased, and `import()` loads only when it runs.
 */
export function apartFindings(rel: string, text: string): Finding[] {
  const out: Finding[] = []
  const from = join(SRC, rel)
  for (const { specifier, typeOnly, dynamic } of importsOf(text)) {
    if (typeOnly || dynamic) continue
    const to = target(from, specifier)
    const toRel = to ? relative(SRC, to) : undefined
    const named = toRel ?? specifier
    if ((toRel ? isPgFile(toRel) : PG_PACKAGE.test(specifier)) && !isPgFile(rel) && !isClusterFile(rel))
      out.push({
        rule: 'postgresql',
        file: rel,
        detail: `imports ${named}: the PostgreSQL side is loaded only by itself, the cluster side or through import()`,
      })
    if ((toRel ? isClusterFile(toRel) : REDIS_PACKAGE.test(specifier)) && !isClusterFile(rel))
      out.push({
        rule: 'cluster',
        file: rel,
        detail: `imports ${named}: the cluster side (cluster/, ioredis) is loaded only by itself or through import()`,
      })
  }
  return out
}

/** The src/ file an import names, or undefined for packages, Bun built-ins and files outside src/. */
function target(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const path = normalize(join(dirname(from), specifier))
  if (!path.startsWith(SRC + '/')) return undefined
  return path
}

export type Finding = { rule: string; file: string; detail: string }

export function check(): { findings: Finding[]; edges: Map<string, Set<string>> } {
  const floorOf = new Map<string, number>()
  FLOORS.forEach((units, floor) => units.forEach((unit) => floorOf.set(unit, floor)))
  const findings: Finding[] = []
  const edges = new Map<string, Set<string>>()
  const files = sourceFiles(SRC)

  for (const file of files) {
    const rel = relative(SRC, file)
    const unit = unitOf(file)
    const text = readFileSync(file, 'utf8')
    const base = rel.split('/').pop()!
    if (!floorOf.has(unit))
      findings.push({
        rule: 'floors',
        file: rel,
        detail: `${unit} has no floor: add it to FLOORS in scripts/check-structure.ts and to docs/DESIGN.md`,
      })

    const tablesFile = base === 'tables.ts'
    findings.push(...apartFindings(rel, text))
    for (const { specifier, typeOnly } of importsOf(text)) {
      const to = target(file, specifier)
      if (!to) continue
      const other = unitOf(to)
      const toRel = relative(SRC, to)
      if (other !== unit) {
        if (!edges.has(unit)) edges.set(unit, new Set())
        edges.get(unit)!.add(other)
        const mine = floorOf.get(unit)
        const theirs = floorOf.get(other)
        if (mine !== undefined && theirs !== undefined && theirs >= mine) {
          findings.push({
            rule: 'floors',
            file: rel,
            detail: `imports ${toRel}: ${other} is ${theirs === mine ? 'on the same floor' : 'a floor above'}`,
          })
        }
        if (TABLES.test(specifier) && !typeOnly && !tablesFile) {
          findings.push({
            rule: 'queries',
            file: rel,
            detail: `imports ${toRel}: another domain's tables are read through its store`,
          })
        }
      }
    }

    const isStore = base === 'store.ts' || base.endsWith('-store.ts') || unit === 'db'
    if (!isStore) {
      if (/\bdb\(\)/.test(text))
        findings.push({ rule: 'queries', file: rel, detail: 'calls db(): queries belong in the domain store files' })
      if (/\btx\s*\.\s*(select|insert|update|delete)\s*\(/.test(text))
        findings.push({
          rule: 'queries',
          file: rel,
          detail: 'builds a query: queries belong in the domain store files',
        })
      if (!tablesFile && importsOf(text).some((i) => i.specifier === 'drizzle-orm')) {
        findings.push({
          rule: 'queries',
          file: rel,
          detail: 'imports drizzle-orm: queries belong in the domain store files',
        })
      }
    }
    for (const detail of ipKeyFindings(rel, text)) findings.push({ rule: 'ip-keys', file: rel, detail })
    const errorList = rel === 'core/errors.ts' || base === 'errors.ts'
    if (!errorList && /\bnew ApiError\(/.test(text)) {
      findings.push({
        rule: 'errors',
        file: rel,
        detail: 'new ApiError(...) outside an errors.ts: add it to the domain error list',
      })
    }
  }
  return { findings, edges }
}

/** The text from `open` (an opening parenthesis) to its closing one, both included. */
function balanced(text: string, open: number): string {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth += 1
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1)
  }
  return text.slice(open)
}

/** `text` without its perIp(...) calls (what they key is ipKey's). */
function withoutPerIp(text: string): string {
  let out = text
  for (let at = out.search(/\bperIp\(/); at !== -1; at = out.search(/\bperIp\(/)) {
    const open = out.indexOf('(', at)
    out = out.slice(0, at) + out.slice(open + balanced(out, open).length)
  }
  return out
}

/** A bucket named for addresses (`'login-ip'`), or an expression that is a client address. */
const ADDRESS = /'[\w-]+-ip'|\bclientIp\(|\bipOf\(|\.ip\b|\bip\b|\bremoteAddress\b|\bpendingIp\b/
/** A rate-limit call of core/ratelimit.ts (not a method such as map.clear()). */
const LIMIT_CALL = /(?<![.\w])(consume|reserve|tryConsume|clear)\(/g
/** A slot written as a tuple: `['bucket', subject`. */
const SLOT_TUPLE = /\[\s*'([\w-]+)'\s*,\s*([^,\]]+)/g
/** A Map or Set whose name says it is keyed by addresses (pendingByIp, socketsPerIp, knownIps), with its key type. */
const IP_COLLECTION = /\b(?:const|let|var)\s+(\w*(?:Ip|IP)s?|ips?)\s*(?::[^=]+)?=\s*new\s+(Map|Set)\b\s*(<[^>(]*>)?/g

/**
 * Where `text` (the file `rel` of src/) keys a limit by a raw client address instead of core/ip-key.ts's key (exported
 * for tests/core/structure.test.ts).
 */
export function ipKeyFindings(rel: string, text: string): string[] {
  if (rel === 'core/ip-key.ts' || rel === 'core/ratelimit.ts') return []
  const out: string[] = []
  if (/::\/64/.test(text)) out.push('makes a /64 of its own: use ipKey (core/ip-key.ts)')
  for (const m of text.matchAll(LIMIT_CALL)) {
    const args = balanced(text, m.index + m[0].length - 1)
    const raw = ADDRESS.exec(withoutPerIp(args))
    if (raw)
      out.push(
        `${m[1]}${args.replace(/\s+/g, ' ').slice(0, 80)} counts ${raw[0]}: make the slot with perIp(bucket, ip, limit)`,
      )
  }
  for (const m of withoutPerIp(text).matchAll(SLOT_TUPLE)) {
    if (m[1].endsWith('-ip') || ADDRESS.test(m[2]))
      out.push(`slot ['${m[1]}', ${m[2].trim()}] counts a raw address: make it with perIp(bucket, ip, limit)`)
  }
  for (const m of text.matchAll(IP_COLLECTION)) {
    if (!m[3]?.startsWith('<IpKey'))
      out.push(`${m[1]} = new ${m[2]}${m[3] ?? ''}: a collection keyed by addresses is keyed by IpKey (core/ip-key.ts)`)
  }
  return out
}

/** Folders that import each other through a loop (strongly connected parts of more than one). */
export function circles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  let counter = 0
  const visit = (v: string) => {
    index.set(v, counter)
    low.set(v, counter)
    counter += 1
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        part.push(w)
      } while (w !== v)
      if (part.length > 1) out.push(part.sort())
    }
  }
  for (const v of edges.keys()) if (!index.has(v)) visit(v)
  return out
}

if (import.meta.main) {
  const { findings, edges } = check()
  for (const part of circles(edges))
    findings.push({ rule: 'floors', file: part.join(', '), detail: 'import each other in a circle' })
  for (const f of findings) console.log(`${f.rule}: src/${f.file}: ${f.detail}`)
  if (findings.length) {
    console.log(`\n${findings.length} finding(s); the floors and rules are in docs/DESIGN.md`)
    process.exit(1)
  }
  console.log('structure: floors, errors, queries and ip-keys as docs/DESIGN.md draws them')
}
