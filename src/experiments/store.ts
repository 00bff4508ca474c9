// Every query of the experiments domain: the definitions (replaced whole) and the version row that tells a server
// another process loaded new ones.
import { asc, eq, sql } from 'drizzle-orm'
import { db, prepared, reading, transaction } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import type { Definition } from './definitions'
import * as sqliteTables from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

const STATE_ID = 1
const INSERT_CHUNK = 500

const versionStmt = prepared((d) =>
  d
    .select({ version: t.experimentState.version })
    .from(t.experimentState)
    .where(eq(t.experimentState.id, STATE_ID))
    .prepare(),
)

/** The version of the loaded definitions (0 before any load). */
export async function readVersion(): Promise<number> {
  return (await versionStmt().get())?.version ?? 0
}

/** The definitions in file order, with the version they belong to (one read transaction). */
export async function readDefinitions(): Promise<{ version: number; definitions: Definition[] }> {
  return await reading(async () => {
    const tx = db()
    const version =
      (
        await tx
          .select({ version: t.experimentState.version })
          .from(t.experimentState)
          .where(eq(t.experimentState.id, STATE_ID))
          .get()
      )?.version ?? 0
    const rows = await tx
      .select({ definition: t.experimentDefinitions.definition })
      .from(t.experimentDefinitions)
      .orderBy(asc(t.experimentDefinitions.position))
      .all()
    return { version, definitions: rows.map((r) => r.definition) }
  })
}

/** Replace every definition in one transaction and bump the version; returns the new version. */
export async function replaceDefinitions(definitions: Definition[], now: number): Promise<number> {
  return await transaction(async (tx) => {
    await tx.delete(t.experimentDefinitions).run()
    for (let i = 0; i < definitions.length; i += INSERT_CHUNK) {
      const chunk = definitions
        .slice(i, i + INSERT_CHUNK)
        .map((definition, j) => ({ name: definition.name, position: i + j, definition }))
      await tx.insert(t.experimentDefinitions).values(chunk).run()
    }
    return (
      await tx
        .insert(t.experimentState)
        .values({ id: STATE_ID, version: 1, loadedAt: now })
        .onConflictDoUpdate({
          target: t.experimentState.id,
          set: { version: sql`${t.experimentState.version} + 1`, loadedAt: now },
        })
        .returning({ version: t.experimentState.version })
        .get()
    ).version
  })
}
