// Codemod: store bodies that run on SQLite and on PostgreSQL alike (issue 30, "PostgreSQL as a second store").
//
//   bun run scripts/codemods/dialect-stores.ts            rewrite every src/**/store.ts and src/db/secrets.ts (and
//                                                         the awaits of tests that import db/client.ts)
//   bun run scripts/codemods/dialect-stores.ts --check    print what it would change, change nothing (exit 1 if any)
//   bun run scripts/codemods/dialect-stores.ts FILE...    rewrite only these files
// then `bunx biome format --write src` (it writes `(await x)` where the parentheses may be redundant).
//
// Re-runnable: after merging a branch whose stores were written in the SQLite-only style, run it again (or on the
// conflicted store files); on an up-to-date tree it changes nothing. What it does, per store file:
// 1. Tables: the values it imports from its `./tables` (sqliteTable objects) are reached through
//    `const t = dialectTables(sqliteTables)` instead (db/dialect-tables.ts): `lobbies` becomes `t.lobbies`, the SQLite
//    table until the server opens PostgreSQL, its twin (db/pg/twins.ts) after. Type imports stay.
// 2. Results: a query's terminal call (`.get()`, `.all()`, `.run()` of a Drizzle SQLite builder or prepared statement)
//    and a row cache's `.read(...)` are awaited unless their value is returned as it is (a returned promise is
//    adopted): on PostgreSQL they are promises, on SQLite plain values (an `await` of a plain value costs a
//    microtask). The function around an added `await` becomes `async`.
// What it cannot fix is printed "by hand" (a function with a declared non-Promise return type, a callback of an Array
// method): fix those, then `bun run typecheck` and `bun run lint`. Raw SQL that differs between the two databases is
// not its business: db/client.ts has the helpers (idsTable, asInteger, lockForUpdate).
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import { type CallExpression, Node, Project, type SourceFile, SyntaxKind } from 'ts-morph'

const ROOT = new URL('../..', import.meta.url).pathname
const TERMINALS = new Set(['get', 'all', 'run'])
const ARRAY_METHODS = new Set(['map', 'flatMap', 'filter', 'some', 'every', 'find', 'forEach', 'reduce', 'sort'])

type Edit = { pos: number; end: number; text: string }

const args = process.argv.slice(2)
const check = args.includes('--check')
const only = args.filter((a) => !a.startsWith('--')).map((a) => new URL(a, `file://${process.cwd()}/`).pathname)

const project = new Project({ tsConfigFilePath: `${ROOT}tsconfig.json`, skipAddingFilesFromTsConfig: true })
const storeFiles = () =>
  project
    .addSourceFilesAtPaths([`${ROOT}src/**/store.ts`, `${ROOT}src/db/secrets.ts`])
    .filter((f) => only.length === 0 || only.includes(f.getFilePath()))
/** Tests that query around the stores (`db().select()...get()`): their results are awaited too (step 2 only). */
const testFiles = () =>
  project
    .addSourceFilesAtPaths(`${ROOT}tests/**/*.ts`)
    .filter((f) => (only.length === 0 || only.includes(f.getFilePath())) && /db\/client'/.test(f.getFullText()))
project.addSourceFilesAtPaths(`${ROOT}src/**/*.ts`)
project.resolveSourceFileDependencies()

const byHand: string[] = []
const where = (node: Node) => `${relative(ROOT, node.getSourceFile().getFilePath())}:${node.getStartLineNumber()}`

/** Step 1: table values imported from ./tables become `t.<name>`. */
function tableEdits(file: SourceFile): Edit[] {
  const edits: Edit[] = []
  const decl = file
    .getImportDeclarations()
    .find((d) => /^\.\.?\/(.*\/)?tables$/.test(d.getModuleSpecifierValue()) && !d.isTypeOnly())
  if (!decl) return edits
  const tables = decl.getNamedImports().filter((n) => {
    if (n.isTypeOnly()) return false
    const type = n.getNameNode().getType().getText()
    return /SQLiteTableWithColumns/.test(type)
  })
  if (tables.length === 0) return edits
  const names = new Set(tables.map((n) => n.getName()))
  // The import keeps what is not a table; the tables come in as one namespace.
  const rest = decl.getNamedImports().filter((n) => !names.has(n.getName()))
  const spec = decl.getModuleSpecifierValue()
  const lines = [`import * as sqliteTables from '${spec}'`]
  if (rest.length && rest.every((n) => n.isTypeOnly()))
    lines.push(`import type { ${rest.map((n) => n.getText().replace(/^type /, '')).join(', ')} } from '${spec}'`)
  else if (rest.length) lines.push(`import { ${rest.map((n) => n.getText()).join(', ')} } from '${spec}'`)
  edits.push({ pos: decl.getStart(), end: decl.getEnd(), text: lines.join('\n') })
  const lastImport = file.getImportDeclarations().at(-1)!
  edits.push({
    pos: lastImport.getEnd(),
    end: lastImport.getEnd(),
    text: `\n\n// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).\nconst t = dialectTables(sqliteTables)`,
  })
  if (!file.getImportDeclarations().some((d) => /(^|\/)dialect-tables$/.test(d.getModuleSpecifierValue()))) {
    const dir = relative(dirname(file.getFilePath()), `${ROOT}src/db`) || '.'
    const from = `${dir.startsWith('.') ? dir : `./${dir}`}/dialect-tables`
    edits.push({ pos: decl.getStart(), end: decl.getStart(), text: `import { dialectTables } from '${from}'\n` })
  }
  for (const id of file.getDescendantsOfKind(SyntaxKind.Identifier)) {
    if (!names.has(id.getText())) continue
    const parent = id.getParent()
    if (Node.isImportSpecifier(parent)) continue
    if (Node.isPropertyAccessExpression(parent) && parent.getNameNode() === id) continue
    if (Node.isPropertyAssignment(parent) && parent.getNameNode() === id) continue
    if (Node.isPropertySignature(parent) || Node.isBindingElement(parent)) continue
    // Only the imported binding (not a local of the same name).
    const symbol = id.getSymbol()
    const declared = symbol?.getDeclarations()[0]
    if (!declared || !Node.isImportSpecifier(declared)) continue
    if (Node.isShorthandPropertyAssignment(parent))
      edits.push({ pos: id.getStart(), end: id.getEnd(), text: `${id.getText()}: t.${id.getText()}` })
    else edits.push({ pos: id.getStart(), end: id.getEnd(), text: `t.${id.getText()}` })
  }
  return edits
}

/** A call whose value must be awaited: a query's terminal call, or a row cache's read. */
function needsAwait(call: CallExpression): boolean {
  const callee = call.getExpression()
  if (!Node.isPropertyAccessExpression(callee)) return false
  const name = callee.getName()
  const receiver = callee.getExpression().getType().getText()
  if (name === 'read') {
    // A load that queries (or awaits) may give a promise; one that builds from what is in hand (a text) does not.
    const load = call.getArguments()[1]
    const queries =
      load !== undefined &&
      (Node.isArrowFunction(load) || Node.isFunctionExpression(load)) &&
      (load.isAsync() || load.getDescendantsOfKind(SyntaxKind.CallExpression).some(needsAwait))
    return queries && /\bRowCache</.test(receiver)
  }
  if (!TERMINALS.has(name)) return false
  return /SQLite|PreparedQuery/.test(receiver)
}

/** Its value is handed on as it is: returned, an arrow's body, awaited already, or given to `void`. */
function handedOn(call: CallExpression): boolean {
  let node: Node = call
  let parent = node.getParent()
  while (
    parent &&
    (Node.isNonNullExpression(parent) || Node.isParenthesizedExpression(parent) || Node.isAsExpression(parent))
  ) {
    node = parent
    parent = node.getParent()
  }
  if (!parent) return false
  // Kept in a variable that is awaited later (two reads begun in one step): `const a = x.read(...); ... await a`.
  while (Node.isBinaryExpression(parent) && parent.getRight() === node) {
    node = parent
    parent = node.getParent()
  }
  if (Node.isVariableDeclaration(parent) && parent.getInitializer() === node) {
    const name = parent.getNameNode()
    if (Node.isIdentifier(name))
      return name.findReferencesAsNodes().some((ref) => Node.isAwaitExpression(ref.getParent()))
  }
  if (!parent) return false
  if (Node.isAwaitExpression(parent) || Node.isReturnStatement(parent) || Node.isVoidExpression(parent)) return true
  if (Node.isArrowFunction(parent) && parent.getBody() === node) return true
  // andThen(result, f) (db/client.ts) takes the result as it is.
  if (Node.isCallExpression(parent) && parent.getExpression().getText() === 'andThen') return true
  return false
}

/** Callbacks whose result the callee awaits or takes as it is (a cache's load stays synchronous on SQLite). */
const TAKES_RESULT = /\.read$|^andThen$|^prepared$|^write$|^transaction$|^queuedTransaction$/

function awaitEdits(file: SourceFile): Edit[] {
  const edits: Edit[] = []
  const madeAsync = new Set<Node>()
  for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    if (!needsAwait(call)) continue
    if (handedOn(call)) {
      // Returned from a plain function: its callers would use a promise as a row on PostgreSQL.
      const fn = call.getFirstAncestor((a) => Node.isArrowFunction(a) || Node.isFunctionDeclaration(a)) as
        | (Node & { isAsync(): boolean })
        | undefined
      const outer = fn?.getParent()
      const taken = Node.isCallExpression(outer) && TAKES_RESULT.test(outer.getExpression().getText())
      if (fn && !fn.isAsync() && !taken && !/^tests\//.test(relative(ROOT, file.getFilePath())))
        byHand.push(`${where(fn)}: a plain function returns a query's result: make it async, await its callers`)
      continue
    }
    const fn = call.getFirstAncestor(
      (a) =>
        Node.isArrowFunction(a) ||
        Node.isFunctionDeclaration(a) ||
        Node.isFunctionExpression(a) ||
        Node.isMethodDeclaration(a),
    )
    if (!fn) {
      byHand.push(`${where(call)}: a query at module level`)
      continue
    }
    const outer = fn.getParent()
    if (
      Node.isCallExpression(outer) &&
      Node.isPropertyAccessExpression(outer.getExpression()) &&
      ARRAY_METHODS.has((outer.getExpression() as unknown as { getName(): string }).getName())
    ) {
      byHand.push(`${where(call)}: a query inside an Array method's callback`)
      continue
    }
    // Parenthesized only where the value is used in place (`(await q.get())?.id`): a statement that starts with `(`
    // would continue the line before it.
    const parent = call.getParent()
    const inPlace =
      Node.isPropertyAccessExpression(parent) ||
      Node.isElementAccessExpression(parent) ||
      Node.isNonNullExpression(parent) ||
      (Node.isCallExpression(parent) && parent.getExpression() === call)
    edits.push({ pos: call.getStart(), end: call.getStart(), text: inPlace ? '(await ' : 'await ' })
    if (inPlace) edits.push({ pos: call.getEnd(), end: call.getEnd(), text: ')' })
    const f = fn as Node & { isAsync(): boolean; getReturnTypeNode(): Node | undefined }
    if (!f.isAsync() && !madeAsync.has(fn)) {
      madeAsync.add(fn)
      const returns = f.getReturnTypeNode()
      if (returns && !/^Promise</.test(returns.getText())) byHand.push(`${where(fn)}: returns ${returns.getText()}`)
      edits.push({ pos: fn.getStart(), end: fn.getStart(), text: 'async ' })
    }
  }
  return edits
}

function apply(text: string, edits: Edit[]): string {
  // Last first, so earlier positions hold; insertions at one position keep their order.
  const sorted = edits.map((e, i) => ({ ...e, i })).sort((a, b) => b.pos - a.pos || b.i - a.i)
  let out = text
  for (const e of sorted) out = out.slice(0, e.pos) + e.text + out.slice(e.end)
  return out
}

let changed = 0
for (const [file, tests] of [
  ...storeFiles().map((f) => [f, false] as const),
  ...testFiles().map((f) => [f, true] as const),
]) {
  const edits = tests ? awaitEdits(file) : [...tableEdits(file), ...awaitEdits(file)]
  if (edits.length === 0) continue
  changed += 1
  const path = file.getFilePath()
  console.log(`${relative(ROOT, path)}: ${edits.length} edits`)
  if (!check) writeFileSync(path, apply(readFileSync(path, 'utf8'), edits))
}
for (const line of byHand) console.log(`by hand: ${line}`)
if (check && changed) process.exit(1)
