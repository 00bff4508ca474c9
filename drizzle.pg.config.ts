// The PostgreSQL migrations: the same tables as drizzle.config.ts (SQLite), declared once in src/**/tables.ts, as
// their PostgreSQL twins (src/db/pg/schema.ts gives them), into drizzle-pg/. `bun run db:generate` runs both configs.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg/schema.ts',
  out: './drizzle-pg',
  casing: 'snake_case',
})
