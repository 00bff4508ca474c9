// One server per database (two processes), a SIGKILL leaves no stale lock, the CLI writes beside a running server, a
// database migrated by a newer binary is refused; backups under concurrent writes restored into a new server.
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, freshEnv, oneLine, serve } from './process-helpers'

const PASSWORD = 'correct horse battery staple'

describe('one server per database', () => {
  test('a second server on the same database refuses in one line naming the pid; the CLI still writes beside it', async () => {
    const { env, db } = freshEnv()
    const first = await serve(env)
    try {
      const second = await cli({ ...env, PORT: '0' }, [])
      const line = oneLine(second)
      expect(line).toContain(`database ${db} is in use by another server (pid ${first.proc.pid}`)
      // Short writes from the CLI go through while the server runs, and the server sees them.
      const created = await cli(env, ['user', 'create', '--email', 'beside@example.test', '--password', PASSWORD])
      expect(created.code).toBe(0)
      const me = await fetch(`${first.url}/api/v9/users/@me`, {
        headers: { authorization: JSON.parse(created.stdout).token },
      })
      expect(me.status).toBe(200)
      // Restoring under a running server is refused too.
      const backup = join(freshEnv().dir, 'b.sqlite')
      expect((await cli(env, ['backup', backup])).code).toBe(0)
      const restore = await cli(env, ['restore', backup])
      expect(restore.code).toBe(1)
      expect(restore.stderr).toContain(`pid ${first.proc.pid}`)
    } finally {
      await first.stop()
    }
    // Once it stopped, the next one starts.
    const third = await serve(env)
    await third.stop()
  }, 30_000)

  test('a server killed with SIGKILL leaves no stale lock', async () => {
    const { env } = freshEnv()
    const first = await serve(env)
    first.proc.kill('SIGKILL')
    await first.proc.exited
    const second = await serve(env)
    expect(second.output()).toContain('listening')
    await second.stop()
  }, 30_000)
})

describe('upgrades', () => {
  test('a database migrated by a newer binary is refused, naming the version it needs; the CLI refuses it too', async () => {
    const { env, db } = freshEnv()
    expect((await cli(env, ['user', 'list'])).code).toBe(0)
    const handle = new Database(db)
    const newest = (handle.query('SELECT max(created_at) AS m FROM __drizzle_migrations').get() as { m: number }).m
    handle
      .query('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)')
      .run('f'.repeat(64), Number(newest) + 1000)
    handle
      .query(
        "INSERT OR REPLACE INTO __lobby_server (key, value) VALUES ('migrated_by', '9.9.9'), ('schema', '9999_future')",
      )
      .run()
    handle.close()
    const line = oneLine(await cli(env, []))
    expect(line).toContain('migrated by lobby-server 9.9.9 (schema 9999_future)')
    expect(line).toContain('run 9.9.9 or newer')
    const fromCli = await cli(env, ['user', 'list'])
    expect(fromCli.code).toBe(1)
    expect(fromCli.stderr).toContain('9.9.9')
    expect(fromCli.stdout).toBe('')
  })

  test('a migrated database records the version that migrated it', async () => {
    const { env, db } = freshEnv()
    expect((await cli(env, ['user', 'list'])).code).toBe(0)
    const handle = new Database(db, { readonly: true })
    const meta = Object.fromEntries(
      (handle.query('SELECT key, value FROM __lobby_server').all() as { key: string; value: string }[]).map((r) => [
        r.key,
        r.value,
      ]),
    )
    handle.close()
    const { version } = await import('../../package.json')
    expect(meta.migrated_by).toBe(version)
    expect(meta.schema).toMatch(/^\d{4}_/)
  })
})

describe('backup and restore', () => {
  test('a backup under concurrent writes holds every write acknowledged before it began; restored, a new server serves them', async () => {
    const { env, dir } = freshEnv({ LOG_LEVEL: 'warn' })
    const server = await serve(env)
    const app = JSON.parse((await cli(env, ['app', 'create', '--name', 'Backup writer'])).stdout)
    const acked: string[] = []
    let writing = true
    const writer = async () => {
      while (writing) {
        const r = await fetch(`${server.url}/api/v9/lobbies`, {
          method: 'POST',
          headers: { authorization: `Bot ${app.bot_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ idle_timeout_seconds: 604800, metadata: { n: String(acked.length) } }),
        })
        if (r.status !== 201) throw new Error(`write failed: ${r.status} ${await r.text()}`)
        acked.push(((await r.json()) as { id: string }).id)
      }
    }
    const writers = Array.from({ length: 4 }, writer)
    while (acked.length < 40) await Bun.sleep(5)
    const beforeBackup = [...acked]
    const file = join(dir, 'backups', 'app-backup.sqlite')
    const backup = await cli(env, ['backup', file])
    const duringBackup = acked.length
    writing = false
    await Promise.all(writers)
    await server.stop()

    expect(backup.code).toBe(0)
    const result = JSON.parse(backup.stdout)
    expect(result).toMatchObject({ file, integrity: 'ok', schema: expect.stringMatching(/^\d{4}_/) })
    expect(result.bytes).toBeGreaterThan(0)
    expect(duringBackup).toBeGreaterThan(beforeBackup.length) // the server kept answering writes during the backup
    expect(readdirSync(join(dir, 'backups'))).toEqual(['app-backup.sqlite']) // no partial file left behind
    // A second backup to the same file is refused; the first stays.
    const again = await cli(env, ['backup', file])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('exists')

    // Restore into a new server's (empty) database path, start it, read every acknowledged row.
    const target = freshEnv({ LOG_LEVEL: 'warn' })
    const restored = await cli(target.env, ['restore', file])
    expect(restored.code).toBe(0)
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: target.db, from: file, previous: null })
    const check = new Database(target.db, { readonly: true })
    expect(check.query('PRAGMA integrity_check').values()).toEqual([['ok']])
    check.close()
    const fresh = await serve(target.env)
    try {
      const missing: string[] = []
      for (const id of beforeBackup) {
        const r = await fetch(`${fresh.url}/api/v9/lobbies/${id}`, {
          headers: { authorization: `Bot ${app.bot_token}` },
        })
        if (r.status !== 200) missing.push(`${id}: ${r.status}`)
      }
      expect(missing).toEqual([])
    } finally {
      await fresh.stop()
    }
  }, 60_000)

  test('restore over an existing database keeps the old file aside and removes its stale WAL', async () => {
    const { env, dir, db } = freshEnv({ LOG_LEVEL: 'silent' })
    expect(
      (
        await cli(env, [
          'user',
          'create',
          '--email',
          'old@example.test',
          '--username',
          'olduser',
          '--password',
          PASSWORD,
        ])
      ).code,
    ).toBe(0)
    const file = join(dir, 'snapshot.sqlite')
    expect((await cli(env, ['backup', file])).code).toBe(0)
    expect(
      (
        await cli(env, [
          'user',
          'create',
          '--email',
          'later@example.test',
          '--username',
          'lateruser',
          '--password',
          PASSWORD,
        ])
      ).code,
    ).toBe(0)
    // A stale write-ahead log beside the database must not be replayed onto the restored copy.
    writeFileSync(`${db}-wal`, 'stale')
    const r = await cli(env, ['restore', file])
    expect(r.code).toBe(0)
    const { previous } = JSON.parse(r.stdout)
    expect(previous).toStartWith(`${db}.before-restore-`)
    expect(existsSync(previous)).toBe(true)
    expect(existsSync(`${db}-wal`)).toBe(false)
    const users = JSON.parse((await cli(env, ['user', 'list'])).stdout).map((u: { username: string }) => u.username)
    expect(users).toEqual(['olduser'])
  })

  test('restore refuses a file that is not a sound lobby-server database, and changes nothing', async () => {
    const { env, dir } = freshEnv({ LOG_LEVEL: 'silent' })
    expect(
      (
        await cli(env, [
          'user',
          'create',
          '--email',
          'keep@example.test',
          '--username',
          'keeper',
          '--password',
          PASSWORD,
        ])
      ).code,
    ).toBe(0)
    const junk = join(dir, 'junk.sqlite')
    writeFileSync(
      junk,
      'this is not a database at all, just text that is long enough to look like a header'.repeat(100),
    )
    const plain = join(dir, 'plain.sqlite')
    const other = new Database(plain)
    other.exec('CREATE TABLE t (x)')
    other.close()
    for (const file of [junk, plain, join(dir, 'missing.sqlite')]) {
      const r = await cli(env, ['restore', file])
      expect(r.code, file).toBe(1)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
    }
    expect(JSON.parse((await cli(env, ['user', 'list'])).stdout).map((u: { username: string }) => u.username)).toEqual([
      'keeper',
    ])
  }, 30_000)
})
