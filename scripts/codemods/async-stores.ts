// Codemod: every store function async, every caller awaiting it (issue 30, "Async stores on SQLite").
//
//   bun run scripts/codemods/async-stores.ts            rewrite the project (src, tests, scripts, bench)
//   bun run scripts/codemods/async-stores.ts --check    print what it would change, change nothing (exit 1 if any)
//   bun run scripts/codemods/async-stores.ts FILE...    rewrite only these files (the analysis still reads them all)
// then `bunx biome format --write src tests scripts bench` (an added `await` may make a line too long).
//
// Re-runnable: after merging a branch written against synchronous stores, run it again (or on the conflicted files)
// and it adds what is missing; on an up-to-date tree it changes nothing. What it finds and cannot fix is printed as
// "by hand" (callbacks of Array methods, getters, constructors, module init, callbacks whose type expects no promise,
// functions passed as values, members typed by a function type alias): fix those, then run `bun run typecheck` (a
// promise used as a row) and `bun run lint` (Biome's noFloatingPromises / noMisusedPromises: a promise neither awaited
// nor handed on, an async callback where none is expected). A call of a function that was already async before a run
// is awaited only where its promise was not meant (not returned, not kept in a promise-typed place or a variable used
// as a promise): on a re-run, a promise put into an untyped answer is caught by none of these but by the API tests
// (tests/core/docs-answers.test.ts checks every answer against its documented schema).
//
// How: the seeds are the exported functions of every store file (`src/**/store.ts` and `src/**/*-store.ts`, but
// KEEP_SYNC), `db/secrets.ts`'s getSecret and the db/client.ts functions that return promises. From each seed it finds
// every reference (TypeScript's find-references); a call that is not already awaited (or handed to `void`, `.then`,
// `Promise.all`) gets `await`; the function around it becomes `async` (its declared return type `T` becomes
// `Promise<T>`) and is itself followed, to a fixed point. A function in an object literal typed by an interface also
// changes that interface's member.
// The analysis reads the tree unchanged; every edit is then applied at once as text, and the whole runs again until
// it finds nothing more to do.
import { readFileSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import { type CallExpression, Node, Project, type SourceFile, SyntaxKind, type Type } from 'ts-morph'

const ROOT = new URL('../..', import.meta.url).pathname
/** Store functions that stay synchronous: they only read an in-memory cache with a synchronous builder. */
const KEEP_SYNC = new Set(['cachedUserText', 'cachedLobbyText'])
/** db/client.ts functions whose callers must await (they return promises now). */
const CLIENT_ASYNC = new Set([
  'transaction',
  'write',
  'reading',
  'queuedTransaction',
  'closeDatabase',
  'optimizeDatabase',
])
const ARRAY_METHODS = new Set([
  'map',
  'flatMap',
  'filter',
  'some',
  'every',
  'find',
  'findIndex',
  'findLast',
  'forEach',
  'reduce',
  'sort',
  'toSorted',
])
const COMBINATORS = new Set(['all', 'allSettled', 'race', 'any'])
/** Elysia's route methods: their handlers may be async. */
const ROUTE_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'all', 'head', 'options', 'route'])

type Edit = { pos: number; text: string; order: number; end?: number }

const args = process.argv.slice(2)
const check = args.includes('--check')
const only = new Set(
  args.filter((a) => !a.startsWith('--')).map((f) => relative(ROOT, new URL(f, `file://${process.cwd()}/`).pathname)),
)

function rel(file: SourceFile): string {
  return relative(ROOT, file.getFilePath())
}

function round(): { edits: Map<string, Edit[]>; manual: string[] } {
  const project = new Project({ tsConfigFilePath: `${ROOT}tsconfig.json` })
  const edits = new Map<string, Edit[]>()
  const manual = new Set<string>()
  const visited = new Set<Node>()
  const queue: Node[] = []
  const asyncDone = new Set<Node>()
  /** The store functions and the db/client.ts ones: every call of them is awaited, whatever it was before. */
  const seeds = new Set<Node>()

  const where = (node: Node) => `${rel(node.getSourceFile())}:${node.getStartLineNumber()}`
  const edit = (node: Node, e: Edit) => {
    const file = node.getSourceFile().getFilePath()
    const list = edits.get(file) ?? []
    if (!list.some((x) => x.pos === e.pos && x.text === e.text && x.order === e.order)) list.push(e)
    edits.set(file, list)
  }
  const enqueue = (decl: Node) => {
    if (visited.has(decl)) return
    visited.add(decl)
    queue.push(decl)
  }
  const inProject = (node: Node) => !node.getSourceFile().getFilePath().includes('/node_modules/')

  /** `T` → `Promise<T>` for a return type node (left alone when it is a promise already). */
  function wrapReturnType(typeNode: Node | undefined, owner: Node): boolean {
    if (!typeNode) return true
    const text = typeNode.getText()
    // A promise already, or a union that admits one (`void | Promise<void>`): an async function fits as it is.
    if (/\b(Promise|PromiseLike)</.test(text)) return true
    if (Node.isTypePredicate(typeNode)) {
      manual.add(`${where(owner)} a type predicate cannot be async`)
      return false
    }
    edit(typeNode, { pos: typeNode.getStart(), end: typeNode.getEnd(), text: `Promise<${text}>`, order: 0 })
    return true
  }

  /** Make a function-like async (and its declared return type a promise). */
  function makeAsync(fn: Node): void {
    if (asyncDone.has(fn)) return
    asyncDone.add(fn)
    if (
      !(
        Node.isFunctionDeclaration(fn) ||
        Node.isMethodDeclaration(fn) ||
        Node.isArrowFunction(fn) ||
        Node.isFunctionExpression(fn)
      )
    )
      return
    if (fn.isAsync()) return
    if (
      (Node.isFunctionDeclaration(fn) || Node.isMethodDeclaration(fn) || Node.isFunctionExpression(fn)) &&
      fn.isGenerator()
    ) {
      manual.add(`${where(fn)} a generator calls a store`)
      return
    }
    if (!wrapReturnType(fn.getReturnTypeNode(), fn)) return
    let at: number
    if (Node.isFunctionDeclaration(fn) || Node.isFunctionExpression(fn))
      at = fn.getFirstChildByKindOrThrow(SyntaxKind.FunctionKeyword).getStart()
    else if (Node.isMethodDeclaration(fn)) at = fn.getNameNode().getStart()
    else at = fn.getStart()
    edit(fn, { pos: at, text: 'async ', order: 0 })
  }

  /** A member of an interface or type literal: its function type's return becomes a promise; its callers follow. */
  function changeMember(decl: Node, from: Node): void {
    if (!inProject(decl)) {
      manual.add(`${where(from)} implements a library's member: it cannot become async here`)
      return
    }
    if (Node.isMethodSignature(decl)) {
      if (wrapReturnType(decl.getReturnTypeNode(), decl)) enqueue(decl)
    } else if (Node.isPropertySignature(decl)) {
      const type = decl.getTypeNode()
      if (type && Node.isFunctionTypeNode(type)) {
        if (wrapReturnType(type.getReturnTypeNode(), decl)) enqueue(decl)
      } else manual.add(`${where(decl)} member typed ${type?.getText() ?? '?'}: make its return a promise by hand`)
    } else if (Node.isPropertyAssignment(decl) || Node.isMethodDeclaration(decl)) enqueue(decl)
  }

  /** A property of an object literal became async: so do the members its contextual type declares (false: none). */
  function followContext(prop: Node): boolean {
    const object = prop.getParent()
    if (!object || !Node.isObjectLiteralExpression(object)) return false
    const name = (prop as unknown as { getName(): string }).getName()
    const contextual = object.getContextualType()
    if (!contextual) return false
    const types =
      contextual.isUnion() || contextual.isIntersection()
        ? [...contextual.getUnionTypes(), ...contextual.getIntersectionTypes()]
        : [contextual]
    let found = false
    for (const t of types)
      for (const d of t.getProperty(name)?.getDeclarations() ?? [])
        if (d !== prop) {
          changeMember(d, prop)
          found = true
        }
    return found
  }

  const acceptsPromise = (t: Type): boolean =>
    t.isAny() ||
    t.isUnknown() ||
    /\b(Promise|PromiseLike|MaybePromise)\b/.test(t.getText()) ||
    (t.isUnion() && t.getUnionTypes().some(acceptsPromise))

  /** `.map(async ...)` whose array goes to Promise.all (or is awaited as such) is fine. */
  function feedsCombinator(call: CallExpression): boolean {
    const parent = call.getParent()
    if (!parent || !Node.isCallExpression(parent)) return false
    const callee = parent.getExpression()
    return (
      Node.isPropertyAccessExpression(callee) &&
      callee.getExpression().getText() === 'Promise' &&
      COMBINATORS.has(callee.getName())
    )
  }

  /** The function around an awaited call: make it async, and follow it when others call it by name. */
  function enclosing(call: Node): void {
    const fn = call.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a))
    if (!fn) {
      manual.add(`${where(call)} a store call at module level`)
      return
    }
    if (Node.isConstructorDeclaration(fn) || Node.isGetAccessorDeclaration(fn) || Node.isSetAccessorDeclaration(fn)) {
      manual.add(`${where(call)} a store call in a ${fn.getKindName()}`)
      return
    }
    const parent = fn.getParentOrThrow()
    // Called by name (a declaration, a method, the function of a variable or a property): async, and followed; a
    // member of an object literal also changes the member its type declares.
    const named =
      Node.isFunctionDeclaration(fn) || Node.isMethodDeclaration(fn)
        ? fn
        : Node.isVariableDeclaration(parent) || Node.isPropertyDeclaration(parent) || Node.isPropertyAssignment(parent)
          ? parent
          : undefined
    if (named) {
      makeAsync(fn)
      enqueue(named)
      if (Node.isMethodDeclaration(named) || Node.isPropertyAssignment(named)) followContext(named)
      return
    }
    if (Node.isCallExpression(parent) && parent.getArguments().includes(fn)) {
      const callee = parent.getExpression()
      if (Node.isPropertyAccessExpression(callee) && ARRAY_METHODS.has(callee.getName())) {
        if ((callee.getName() === 'map' || callee.getName() === 'flatMap') && feedsCombinator(parent)) makeAsync(fn)
        else manual.add(`${where(fn)} a callback of .${callee.getName()} calls a store`)
        return
      }
      if (
        Node.isPropertyAccessExpression(callee) &&
        ROUTE_METHODS.has(callee.getName()) &&
        /node_modules\/elysia\//.test(callee.getExpression().getType().getText())
      ) {
        makeAsync(fn)
        return
      }
      const signature = (fn as Node).getType().getCallSignatures()[0]
      const expected = expectedReturn(fn, parent)
      if (expected && acceptsPromise(expected) && !expected.isTypeParameter()) {
        makeAsync(fn)
        return
      }
      manual.add(
        `${where(fn)} a callback of ${callee.getText().slice(0, 60)} calls a store; it expects ${expected?.getText() ?? signature?.getReturnType().getText() ?? '?'}`,
      )
      return
    }
    // Elsewhere (a parameter's default, a returned function): async when its type expects a promise.
    const expected = (fn as unknown as { getContextualType(): Type | undefined })
      .getContextualType()
      ?.getCallSignatures()[0]
      ?.getReturnType()
    if (expected && acceptsPromise(expected) && !expected.isTypeParameter()) {
      makeAsync(fn)
      return
    }
    manual.add(`${where(fn)} a function (${parent.getKindName()}) calls a store`)
  }

  /**
   * What a callback passed to a call is expected to return: from its contextual type, else from the parameter it fills
   * in the call's resolved signature.
   */
  function expectedReturn(fn: Node, call: CallExpression): Type | undefined {
    const contextual = (fn as unknown as { getContextualType(): Type | undefined }).getContextualType()
    const fromContext = contextual?.getCallSignatures()[0]?.getReturnType()
    if (fromContext) return fromContext
    const index = call.getArguments().indexOf(fn)
    const parameter = call.getProject().getTypeChecker().getResolvedSignature(call)?.getParameters()[index]
    return parameter?.getTypeAtLocation(call).getCallSignatures()[0]?.getReturnType()
  }

  /**
   * A variable holding the promise and using it as one (awaited later, chained, handed to Promise.all or to a test's
   * `expect(...).rejects`): the code means the promise, whatever the function.
   */
  function keptInVariable(call: CallExpression): boolean {
    const declaration = call.getParent()
    if (!declaration || !Node.isVariableDeclaration(declaration) || declaration.getInitializer() !== call) return false
    const name = declaration.getNameNode()
    if (!Node.isIdentifier(name)) return false
    return name.findReferencesAsNodes().some((ref) => {
      const parent = ref.getParent()
      if (!parent || parent === declaration) return false
      if (Node.isAwaitExpression(parent)) return true
      if (Node.isPropertyAccessExpression(parent) && ['then', 'catch', 'finally'].includes(parent.getName()))
        return true
      const after = Node.isCallExpression(parent) ? parent.getParent() : undefined
      if (after && Node.isPropertyAccessExpression(after) && ['rejects', 'resolves'].includes(after.getName()))
        return true
      const list = Node.isArrayLiteralExpression(parent) ? parent.getParent() : parent
      const callee = list && Node.isCallExpression(list) ? list.getExpression() : undefined
      return (
        !!callee &&
        Node.isPropertyAccessExpression(callee) &&
        callee.getExpression().getText() === 'Promise' &&
        COMBINATORS.has(callee.getName())
      )
    })
  }

  /** Where a promise is already taken care of: awaited, voided, chained, or handed to Promise.all. */
  function handled(call: CallExpression): boolean {
    const parent = call.getParent()
    if (!parent) return true
    if (Node.isAwaitExpression(parent) || Node.isVoidExpression(parent)) return true
    if (Node.isPropertyAccessExpression(parent) && ['then', 'catch', 'finally'].includes(parent.getName())) return true
    if (Node.isArrayLiteralExpression(parent) && parent.getParent() && Node.isCallExpression(parent.getParent()!))
      return feedsCombinator(parent as unknown as CallExpression)
    if (Node.isCallExpression(parent) && parent.getArguments().includes(call) && feedsCombinator(call)) return true
    // A test's `expect(promise).rejects` / `.resolves`.
    const after = Node.isCallExpression(parent) ? parent.getParent() : undefined
    if (after && Node.isPropertyAccessExpression(after) && ['rejects', 'resolves'].includes(after.getName()))
      return true
    return false
  }

  /** In the try block of a try statement of its own function. */
  function insideTry(node: Node): boolean {
    for (let n: Node | undefined = node; n && !Node.isFunctionLikeDeclaration(n); n = n.getParent()) {
      const parent = n.getParent()
      if (parent && Node.isTryStatement(parent) && parent.getTryBlock() === n) return true
    }
    return false
  }

  /** Whether a function returned a promise before this run (the analysis reads the tree as it was). */
  function returnedPromise(fn: Node): boolean {
    const f = fn as unknown as { isAsync?(): boolean; getReturnTypeNode?(): Node | undefined }
    return f.isAsync?.() === true || /^Promise</.test(f.getReturnTypeNode?.()?.getText() ?? '')
  }

  /**
   * A call of a function that returned a promise before this run, where the promise is already taken care of: returned
   * (by a return or an arrow's body: the function around it already returns a promise), or put where a promise is
   * expected (`p ??= start()` into a Promise-typed slot, an argument typed Promise). Left as it is, and not followed.
   */
  function promiseKept(call: CallExpression, callee: Node): boolean {
    // Put in a variable declared as a promise (`const held: Promise<void> = transaction(...)`).
    const declaration = call.getParent()
    if (
      declaration &&
      Node.isVariableDeclaration(declaration) &&
      /^(Promise|PromiseLike)</.test(declaration.getTypeNode()?.getText() ?? '')
    )
      return true
    if (keptInVariable(call)) return true
    if (seeds.has(callee) || !returnedPromise(callee)) return false
    const parent = call.getParentOrThrow()
    // Returned as it is, unless inside a try block, whose catch would no longer see the rejection.
    if (Node.isReturnStatement(parent) || Node.isArrowFunction(parent)) return !insideTry(call)
    if (Node.isExpressionStatement(parent)) return false
    if (keptInVariable(call)) return true
    const expected = call.getContextualType()
    return (
      expected !== undefined &&
      !expected.isAny() &&
      !expected.isUnknown() &&
      /\b(Promise|PromiseLike)</.test(expected.getText())
    )
  }

  function awaitCall(call: CallExpression, callee: Node): void {
    // Awaited already: the function around it waits on a store, and its callers follow.
    if (call.getParent() && Node.isAwaitExpression(call.getParent()!)) return enclosing(call)
    if (promiseKept(call, callee)) return
    if (!handled(call)) {
      const was =
        returnedPromise(callee) && !CLIENT_ASYNC.has((callee as unknown as { getName?(): string }).getName?.() ?? '')
      if (was && Node.isExpressionStatement(call.getParent()!))
        manual.add(
          `${where(call)} now awaits ${call.getExpression().getText()}(), which was async and not awaited before: meant to run on its own? (then \`void\` it)`,
        )
      const parent = call.getParentOrThrow()
      const parens =
        (Node.isPropertyAccessExpression(parent) && parent.getExpression() === call) ||
        (Node.isElementAccessExpression(parent) && parent.getExpression() === call) ||
        (Node.isCallExpression(parent) && parent.getExpression() === call) ||
        Node.isNonNullExpression(parent) ||
        Node.isTaggedTemplateExpression(parent)
      const length = call.getEnd() - call.getStart()
      edit(call, { pos: call.getStart(), text: parens ? '(await ' : 'await ', order: -length })
      if (parens) edit(call, { pos: call.getEnd(), text: ')', order: length })
    }
    // Awaited now, the function around it waits on a store: it is async, and its callers follow.
    if (!handled(call)) enclosing(call)
  }

  /** The call a reference is the callee of (`f(...)`, `x.f(...)`), if any. */
  function callOf(ref: Node): CallExpression | undefined {
    let target: Node = ref
    const parent = ref.getParent()
    if (parent && Node.isPropertyAccessExpression(parent) && parent.getNameNode() === ref) target = parent
    const call = target.getParent()
    if (call && Node.isCallExpression(call) && call.getExpression() === target) return call
    return undefined
  }

  function references(decl: Node): Node[] {
    const name = (decl as unknown as { getNameNode?(): Node }).getNameNode?.()
    if (!name || !Node.isIdentifier(name)) return []
    return name.findReferencesAsNodes()
  }

  function follow(decl: Node): void {
    let fn: Node = decl
    if (Node.isVariableDeclaration(decl) || Node.isPropertyDeclaration(decl) || Node.isPropertyAssignment(decl)) {
      const init = decl.getInitializer()
      if (init && (Node.isArrowFunction(init) || Node.isFunctionExpression(init))) fn = init
    }
    makeAsync(fn)
    for (const ref of references(decl)) {
      const parent = ref.getParent()
      if (!parent) continue
      if (
        Node.isImportSpecifier(parent) ||
        Node.isExportSpecifier(parent) ||
        Node.isTypeQuery(parent) ||
        Node.isImportClause(parent) ||
        Node.isQualifiedName(parent)
      )
        continue
      // Handed on in an object (`{ enabled: mfaEnabled }`, `{ authenticatorTypes }`, `{ enabled: mfa.enabled }`): the
      // member it fills follows.
      const value = Node.isPropertyAccessExpression(parent) && parent.getNameNode() === ref ? parent : ref
      const holder = value.getParent()
      if (
        Node.isShorthandPropertyAssignment(parent) ||
        (holder && Node.isPropertyAssignment(holder) && holder.getInitializer() === value)
      ) {
        const property = Node.isShorthandPropertyAssignment(parent) ? parent : holder!
        if (!followContext(property))
          manual.add(`${where(ref)} ${ref.getText()} is handed on in an object: check what calls it`)
        continue
      }
      // Another declaration of the same name (an object's member, an interface's): not a use.
      if (
        parent === decl ||
        ((Node.isPropertyAssignment(parent) ||
          Node.isMethodDeclaration(parent) ||
          Node.isPropertySignature(parent) ||
          Node.isMethodSignature(parent) ||
          Node.isPropertyDeclaration(parent) ||
          Node.isVariableDeclaration(parent) ||
          Node.isFunctionDeclaration(parent) ||
          Node.isBindingElement(parent)) &&
          parent.getNameNode() === ref)
      )
        continue
      const call = callOf(ref)
      if (call) awaitCall(call, fn)
      else manual.add(`${where(ref)} ${ref.getText()} is used as a value (not called): check what calls it`)
    }
  }

  // Seeds.
  const seed = (fn: Node) => {
    seeds.add(fn)
    enqueue(fn)
  }
  for (const file of project.getSourceFiles()) {
    const path = rel(file)
    if (/^src\/(.+\/)?([\w-]+-)?store\.ts$/.test(path))
      for (const fn of file.getFunctions()) if (fn.isExported() && !KEEP_SYNC.has(fn.getName() ?? '')) seed(fn)
    if (path === 'src/db/secrets.ts') seed(file.getFunctionOrThrow('getSecret'))
    if (path === 'src/db/client.ts')
      for (const fn of file.getFunctions()) if (CLIENT_ASYNC.has(fn.getName() ?? '')) seed(fn)
  }
  while (queue.length) follow(queue.shift()!)
  return { edits, manual: [...manual].sort() }
}

function apply(file: string, list: Edit[]): void {
  let text = readFileSync(file, 'utf8')
  // From the end: positions before an edit stay right. At one position, an outer call's `await ` before an inner
  // call's `(await `, and an inner `)` before an outer one (order: -length for starts, +length for ends).
  const sorted = [...list].sort((a, b) => b.pos - a.pos || b.order - a.order)
  for (const e of sorted) text = text.slice(0, e.pos) + e.text + text.slice(e.end ?? e.pos)
  writeFileSync(file, text)
}

for (let pass = 1; ; pass++) {
  const { edits, manual } = round()
  const files = [...edits.keys()].filter((f) => only.size === 0 || only.has(relative(ROOT, f)))
  const count = files.reduce((n, f) => n + edits.get(f)!.length, 0)
  console.log(`pass ${pass}: ${count} edits in ${files.length} files`)
  if (check || count === 0) {
    for (const line of manual) console.log(`by hand: ${line}`)
    if (check && count) for (const f of files) console.log(`would change ${relative(ROOT, f)}`)
    process.exit(check && count ? 1 : 0)
  }
  for (const f of files) apply(f, edits.get(f)!)
}
