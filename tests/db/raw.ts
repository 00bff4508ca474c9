// SQL around the stores, on whichever database the test server runs on (TEST_DATABASE=postgres, tests/helpers.ts):
// for tests that seed rows in bulk or read a column no answer shows. Written once with `?` placeholders; on
// PostgreSQL they become $1, $2…, and rows come back as bun:sqlite gives them (bigint as numbers, booleans as 0/1).
import type { Sql } from 'postgres'
import { rawDatabase } from '../../src/db/client'

const urlKey = Symbol.for('lobby-server.test-database-url')
type Holder = { [urlKey]?: string; [clientKey]?: Sql }
const clientKey = Symbol.for('lobby-server.test-database-raw')

/** The test server's PostgreSQL database (tests/helpers.ts sets it when it starts the server there). */
export function setRawDatabaseUrl(url: string): void {
  ;(globalThis as Holder)[urlKey] = url
}

async function pg(): Promise<Sql | undefined> {
  const holder = globalThis as Holder
  const url = holder[urlKey]
  if (!url) return undefined
  if (!holder[clientKey]) {
    const { default: postgres } = await import('postgres')
    holder[clientKey] = postgres(url, {
      max: 2,
      onnotice: () => {},
      types: {
        bigint: { to: 20, from: [20], serialize: String, parse: Number },
        bool: {
          to: 16,
          from: [16],
          serialize: (b: unknown) => (b ? 't' : 'f'),
          parse: (v: string) => (v === 't' ? 1 : 0),
        },
      },
    })
  }
  return holder[clientKey]
}

const numbered = (text: string) => {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}

/** Run one statement; its rows (none for a write). */
export async function rawSql<T = any>(text: string, ...params: unknown[]): Promise<T[]> {
  const client = await pg()
  if (client) return (await client.unsafe(numbered(text), params as never[])) as unknown as T[]
  return rawDatabase()
    .query(text)
    .all(...(params as never[])) as T[]
}

/** The first row of one statement, or undefined. */
export async function rawRow<T = any>(text: string, ...params: unknown[]): Promise<T | undefined> {
  return (await rawSql<T>(text, ...params))[0]
}

/** One statement run for each list of parameters, in one transaction (bulk seeding). */
export async function rawBatch(text: string, rows: unknown[][]): Promise<void> {
  const client = await pg()
  if (client) {
    await client.begin(async (tx) => {
      for (const params of rows) await tx.unsafe(numbered(text), params as never[])
    })
    return
  }
  const statement = rawDatabase().prepare(text)
  rawDatabase().transaction(() => {
    for (const params of rows) statement.run(...(params as never[]))
  })()
}

/** The test server's PostgreSQL database URL, when it runs on one (other servers can share it). */
export function rawDatabaseUrl(): string | undefined {
  return (globalThis as Holder)[urlKey]
}

/**
 * A write by another process (what the CLI does): on SQLite through a connection of its own to the file (the server
 * sees it through data_version), on PostgreSQL followed by the NOTIFY the CLI sends. Resolves once the server can
 * have seen it: a few milliseconds later (the change counter is looked at once per millisecond; a NOTIFY travels).
 */
export async function foreignWrite(text: string, ...params: unknown[]): Promise<void> {
  const client = await pg()
  if (client) {
    await client.unsafe(numbered(text), params as never[])
    await client.notify('lobby_server_changes', '')
    await Bun.sleep(20)
    return
  }
  const { Database } = await import('bun:sqlite')
  const other = new Database(rawDatabase().filename)
  try {
    other.exec('PRAGMA busy_timeout = 10000')
    other.run(text, params as never[])
  } finally {
    other.close()
  }
  await Bun.sleep(2)
}
