// suite: one pass
// A migration that rebuilds a SQLite table (drizzle-kit's way to change a column: CREATE __new_x, copy, DROP x,
// RENAME) keeps the rows that hang on it. Here: channels.guild_id made nullable for DM channels (issue 45), on a file
// migrated up to the migration before, holding a guild channel with a message, a reaction and an invite. With foreign
// keys on inside the migration's transaction, DROP TABLE channels would delete every message and invite (ON DELETE
// CASCADE); db/migrate.ts turns them off for the run and checks them before the COMMIT.
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { applyMigrations, embeddedMigrations } from '../../src/db/migrate'

test('rebuilding channels keeps its rows, their messages, reactions and invites, and foreign keys stay on', () => {
  const db = new Database(':memory:')
  db.exec('PRAGMA foreign_keys = ON')
  const all = embeddedMigrations()
  const rebuild = all.findIndex((m) => m.sql.some((s) => s.includes('CREATE TABLE `__new_channels`')))
  expect(rebuild).toBeGreaterThan(0)
  applyMigrations(db, all.slice(0, rebuild))
  db.exec(`INSERT INTO users (id, username, created_at) VALUES ('1', 'owner', 0);
    INSERT INTO guilds (id, name, owner_id, created_at) VALUES ('10', 'g', '1', 0);
    INSERT INTO channels (id, guild_id, type, name, created_at) VALUES ('20', '10', 0, 'general', 0);
    INSERT INTO channel_messages (id, channel_id, author_id, content, created_at) VALUES ('30', '20', '1', 'hi', 0);
    INSERT INTO channel_message_reactions (message_id, emoji, user_id, created_at) VALUES ('30', 'x', '1', 0);
    INSERT INTO invites (code, guild_id, channel_id, max_age, max_uses, created_at) VALUES ('abc', '10', '20', 0, 0, 0);`)

  expect(applyMigrations(db, all).length).toBe(all.length - rebuild)

  const count = (table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
  expect(count('channels')).toBe(1)
  expect(count('channel_messages')).toBe(1)
  expect(count('channel_message_reactions')).toBe(1)
  expect(count('invites')).toBe(1)
  expect((db.query('PRAGMA foreign_keys').get() as { foreign_keys: number }).foreign_keys).toBe(1)
  // The rebuilt table takes a DM channel (no guild), and its children still point at it: deleting it cascades.
  db.exec(`INSERT INTO channels (id, guild_id, type, name, created_at) VALUES ('21', NULL, 1, '', 0)`)
  db.exec(`DELETE FROM channels WHERE id = '20'`)
  expect(count('channel_messages')).toBe(0)
  expect(count('invites')).toBe(0)
  db.close()
})
