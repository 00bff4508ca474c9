// drizzle.pg.config.ts's schema: the PostgreSQL twin (db/pg/twins.ts) of every table of src/**/tables.ts, so that
// drizzle-pg/ is generated from the same declarations as drizzle/. drizzle-kit require()s this file and takes the
// PostgreSQL tables among the values of what it exports: the exports are the twins, by table name. Not loaded by the
// server.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { pgTables } from './twins'

const src = join(__dirname, '..', '..')
for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).sort())
  if (file.endsWith('/tables.ts') || file === 'tables.ts') require(join(src, file))

module.exports = Object.fromEntries(pgTables())
