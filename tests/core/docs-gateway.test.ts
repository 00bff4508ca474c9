// The Gateway page (/api/docs/gateway) against the source (issue 18, "API docs"): every opcode the server reads, every
// close code it sends on the Gateway and on the remote-auth socket, every dispatch event it publishes, every remote-auth
// frame and every lobby-call close reason is on the page, and nothing on the page is something the server does not do.
import { beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ACCEPTED_NOOP_OPS, Close, Op, QOS_HEARTBEAT } from '../../src/gateway/protocol'
import { Close as RemoteAuthClose } from '../../src/remote-auth/desktop'
import { closeReasons, VoiceDispatch, VoiceOp } from '../../src/voice/protocol'
import { server } from '../helpers'

const SRC = join(import.meta.dir, '../../src')

/** The server's source files (the browser pages under web/pages are clients, not the server). */
function sources(dir = SRC): { path: string; text: string }[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'pages' ? [] : sources(path)
    return name.endsWith('.ts') && name !== 'docs.ts' ? [{ path, text: readFileSync(path, 'utf8') }] : []
  })
}

let html = ''
beforeAll(async () => {
  const { url } = await server()
  const r = await fetch(`${url}/api/docs/gateway`)
  expect(r.status).toBe(200)
  html = await r.text()
})

/** The rows of the page's table with this id, each as its cells' text. */
function rows(id: string): string[][] {
  const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(html)?.[1]
  if (!table) throw new Error(`no table ${id}`)
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .map((r) =>
      [...r[1].matchAll(/<td>([\s\S]*?)<\/td>/g)].map((c) => c[1].replace(/<[^>]+>/g, '').replace(/&amp;/g, '&')),
    )
    .filter((cells) => cells.length > 0)
}

const sorted = (values: Iterable<number | string>) => [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

describe('Gateway page', () => {
  test('opcodes: exactly the ones the server reads or sends', () => {
    const table = rows('opcodes')
    const listed = table.filter((r) => r[0] !== '').map((r) => Number(r[0]))
    const ignored = table.find((r) => r[1] === 'accepted, ignored')![3]
    const onPage = [...listed, ...[...ignored.matchAll(/\b\d+\b/g)].map((m) => Number(m[0]))]
    const known = [...Object.values(Op), QOS_HEARTBEAT, ...Object.values(VoiceOp), ...ACCEPTED_NOOP_OPS]
    expect(sorted(onPage)).toEqual(sorted(known))
    // Ops the server ignores are not described as anything else.
    for (const op of ACCEPTED_NOOP_OPS) expect(listed).not.toContain(op)
    // Every opcode a domain registers with the Gateway is a VoiceOp (the page names those three).
    for (const { text } of sources())
      for (const m of text.matchAll(/onOpcode\(\s*(\d+)/g))
        expect(Object.values(VoiceOp) as number[]).toContain(Number(m[1]))
  })

  test('close codes: every one the Gateway sends, and the ones it never sends say so', () => {
    const sent = new Set<number>()
    for (const { path, text } of sources()) {
      if (path.includes('/remote-auth/')) continue
      // close(ws, Close.X, ...), endSession(s, 4004, ...), events.closeUser(id, 4004, ...), ws.close(1001, ...)
      for (const m of text.matchAll(
        /\b(?:close|closeUser|closeAuthSession|endSession)\([^;\n]*?(?:Close\.(\w+)|\b([14]\d{3})\b)/g,
      )) {
        sent.add(m[1] ? Close[m[1] as keyof typeof Close] : Number(m[2]))
      }
    }
    expect(sent.size).toBeGreaterThan(8)
    const table = rows('close-codes')
    const onPage = new Map(table.map((r) => [Number(r[0]), r[2]]))
    for (const code of sent) expect(onPage.get(code), `close ${code}`).toBeDefined()
    for (const code of sent) expect(onPage.get(code), `close ${code}`).not.toStartWith('not sent')
    // Every code of protocol.ts and Discord's 4000-4014 (but 4006, retired) is listed.
    for (const code of [...Object.values(Close), ...Array.from({ length: 15 }, (_, i) => 4000 + i)])
      expect(onPage.has(code), `close ${code}`).toBe(true)
    // What the page says is sent is sent (1009 is Bun's own, for frames over the app-wide limit).
    const claimed = [...onPage].filter(([, text]) => !text.startsWith('not sent')).map(([code]) => code)
    expect(sorted(claimed)).toEqual(sorted([...sent, 1009]))
  })

  test('dispatch events: exactly the ones the source publishes', () => {
    const published = new Set<string>(Object.values(VoiceDispatch))
    for (const { text } of sources()) {
      for (const m of text.matchAll(
        /\b(?:publish|publishToUser|toLobby|toUser|sendDirect|send|announce)\([^;]*?'([A-Z][A-Z_]{3,})'/g,
      ))
        published.add(m[1])
    }
    expect(published.size).toBeGreaterThan(25)
    const onPage = rows('events').map((r) => r[0])
    expect(sorted(onPage)).toEqual(sorted(published))
    // Each says who gets it and what its d is.
    for (const [type, to, payload] of rows('events'))
      expect([type, to.length > 5, payload.length > 3]).toEqual([type, true, true])
  })

  test("the lobby call's close reasons are voice/protocol.ts's", () => {
    expect(sorted(rows('voice-close-reasons').map((r) => r[0]))).toEqual(sorted(Object.keys(closeReasons)))
  })

  test('remote-auth: every frame the socket sends or reads, and every close code it sends', () => {
    const files = sources().filter((f) => f.path.includes('/remote-auth/'))
    const serverOps = new Set(files.flatMap((f) => [...f.text.matchAll(/\bop: '(\w+)'/g)].map((m) => m[1])))
    const clientOps = new Set(files.flatMap((f) => [...f.text.matchAll(/\bcase '(\w+)':/g)].map((m) => m[1])))
    // nonce_proof goes both ways; hello is sent before any frame.
    expect(serverOps.size).toBeGreaterThan(5)
    const frames = rows('remote-auth-frames')
    expect(sorted(frames.filter((r) => r[0] === 'server').map((r) => r[1]))).toEqual(sorted(serverOps))
    expect(sorted(frames.filter((r) => r[0] === 'client').map((r) => r[1]))).toEqual(sorted(clientOps))
    const sent = new Set(
      files.flatMap((f) =>
        [...f.text.matchAll(/\bClose\.(\w+)/g)].map((m) => RemoteAuthClose[m[1] as keyof typeof RemoteAuthClose]),
      ),
    )
    expect(sorted(rows('remote-auth-close-codes').map((r) => Number(r[0])))).toEqual(sorted(sent))
    expect(sorted(sent)).toEqual(sorted(Object.values(RemoteAuthClose)))
  })
})
