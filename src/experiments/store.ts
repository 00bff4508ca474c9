// Every query of the experiments domain: the definitions (replaced whole) and the version row that tells a server
// another process loaded new ones.
import { asc, eq, sql } from 'drizzle-orm'
import { db, prepared, reading, transaction } from '../db/client'
import type { Definition } from './definitions'
import { experimentDefinitions, experimentState } from './tables'

const STATE_ID = 1
const INSERT_CHUNK = 500

const versionStmt = prepared((d) =>
  d
    .select({ version: experimentState.version })
    .from(experimentState)
    .where(eq(experimentState.id, STATE_ID))
    .prepare(),
)

/** The version of the loaded definitions (0 before any load). */
export async function readVersion(): Promise<number> {
  return versionStmt().get()?.version ?? 0
}

/** The definitions in file order, with the version they belong to (one read transaction). */
export async function readDefinitions(): Promise<{ version: number; definitions: Definition[] }> {
  return await reading(() => {
    const tx = db()
    const version =
      tx
        .select({ version: experimentState.version })
        .from(experimentState)
        .where(eq(experimentState.id, STATE_ID))
        .get()?.version ?? 0
    const rows = tx
      .select({ definition: experimentDefinitions.definition })
      .from(experimentDefinitions)
      .orderBy(asc(experimentDefinitions.position))
      .all()
    return { version, definitions: rows.map((r) => r.definition) }
  })
}

/** Replace every definition in one transaction and bump the version; returns the new version. */
export async function replaceDefinitions(definitions: Definition[], now: number): Promise<number> {
  return await transaction((tx) => {
    tx.delete(experimentDefinitions).run()
    for (let i = 0; i < definitions.length; i += INSERT_CHUNK) {
      const chunk = definitions
        .slice(i, i + INSERT_CHUNK)
        .map((definition, j) => ({ name: definition.name, position: i + j, definition }))
      tx.insert(experimentDefinitions).values(chunk).run()
    }
    return tx
      .insert(experimentState)
      .values({ id: STATE_ID, version: 1, loadedAt: now })
      .onConflictDoUpdate({
        target: experimentState.id,
        set: { version: sql`${experimentState.version} + 1`, loadedAt: now },
      })
      .returning({ version: experimentState.version })
      .get().version
  })
}
