// The PostgreSQL migrations: the same tables as drizzle.config.ts (SQLite) from their mirror, src/**/tables.pg.ts,
// into drizzle-pg/. `bun run db:generate` runs both configs.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/**/tables.pg.ts',
  out: './drizzle-pg',
  casing: 'snake_case',
})
