// One server per database. Gateway events, calls and remote-auth sockets live in one process's memory, so a second
// server on the same file would answer half the requests without them. The server holds a write lock on a small
// SQLite file beside the database (`<DATABASE_PATH>.lock`) for its whole life: SQLite takes it with fcntl, so the
// kernel drops it when the process ends however it ends (a SIGKILL leaves no stale lock), and the database itself
// stays open to the CLI's short writes. A second server finds the lock taken and names the pid written in the file.
import { appState } from '../core/app'
import { Database } from 'bun:sqlite'
import { hostname } from 'node:os'

export class DatabaseLockedError extends Error {}

type Holder = { pid: number; host: string; since: string }

/** What this module holds per App (core/app.ts). */
const newDatabaseLock = () => ({
  held: undefined as { path: string; handle: Database } | undefined,
})
declare module '../core/app' {
  interface AppState {
    databaseLock: ReturnType<typeof newDatabaseLock>
  }
}
const lockState = appState('databaseLock', newDatabaseLock)

export function lockPathOf(databasePath: string): string {
  return `${databasePath}.lock`
}

function busy(error: unknown): boolean {
  return /SQLITE_BUSY|database is locked/i.test(
    String((error as Error)?.message ?? error) + String((error as { code?: string })?.code ?? ''),
  )
}

/** Who holds the lock (the row it wrote), retried briefly while the holder itself is writing it. */
function readHolder(handle: Database): Holder | undefined {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      return (handle.query('SELECT pid, host, since FROM holder').get() as Holder | null) ?? undefined
    } catch (error) {
      if (!busy(error) && !/no such table/.test(String(error))) throw error
      Bun.sleepSync(10)
    }
  }
  return undefined
}

function refused(databasePath: string, handle: Database): DatabaseLockedError {
  const holder = readHolder(handle)
  handle.close()
  const who = holder
    ? `pid ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}, since ${holder.since}`
    : 'another process'
  return new DatabaseLockedError(`database ${databasePath} is in use by another server (${who}); stop it first`)
}

/** Take the server lock of `databasePath` for this process, or throw DatabaseLockedError naming its holder. */
export function lockDatabase(databasePath: string): void {
  const st = lockState()
  if (databasePath === ':memory:') return
  if (st.held) throw new Error(`this process already holds the lock of ${st.held.path}`)
  const handle = new Database(lockPathOf(databasePath), { create: true })
  try {
    handle.exec('PRAGMA busy_timeout = 0')
    // A rollback journal (not WAL): the holder's RESERVED lock lets others read the holder row but not write.
    handle.exec('PRAGMA journal_mode = DELETE')
    // The holder row only names who holds the lock while the process lives (the kernel drops the lock with it): it
    // needs no fsync, which cost ~10 ms of every start.
    handle.exec('PRAGMA synchronous = OFF')
    handle.exec('BEGIN IMMEDIATE')
  } catch (error) {
    if (busy(error)) throw refused(databasePath, handle)
    handle.close()
    throw error
  }
  try {
    handle.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, host TEXT NOT NULL, since TEXT NOT NULL)')
    handle.exec('DELETE FROM holder')
    handle
      .query('INSERT INTO holder (pid, host, since) VALUES (?, ?, ?)')
      .run(process.pid, hostname(), new Date().toISOString())
    handle.exec('COMMIT')
    // Committed so that others can read it; then held again for good. A server that slipped in between wins.
    handle.exec('BEGIN IMMEDIATE')
  } catch (error) {
    if (busy(error)) throw refused(databasePath, handle)
    handle.close()
    throw error
  }
  st.held = { path: databasePath, handle }
}

/** Release the lock (server stop). */
export function unlockDatabase(): void {
  const st = lockState()
  if (!st.held) return
  try {
    st.held.handle.exec('ROLLBACK')
  } catch {}
  st.held.handle.close()
  st.held = undefined
}
