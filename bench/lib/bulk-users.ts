// Seeds N verified users with one session each into DATABASE_PATH (run in its own process before the server starts),
// through the same functions as `server user create` (createVerifiedUser + createSession).
// Every user gets the same password; hashing it 5000 times with argon2id (~50 ms each here) would take minutes, so
// Bun.password.hash answers one precomputed hash made with our parameters. Login verifies against it as usual.
// Usage: bun bench/lib/bulk-users.ts COUNT OUT.json
import { loadConfig, setConfig } from '../../src/config'
import { closeDatabase, openDatabase } from '../../src/db/client'
import { postgresSide } from '../../src/db/postgres-side'
import { PASSWORD_PARAMS } from '../../src/accounts/passwords'
import { createSession } from '../../src/accounts/sessions'
import { createVerifiedUser } from '../../src/accounts/users'
import { BENCH_PASSWORD } from './world-constants'

const count = Number(process.argv[2])
const out = process.argv[3]
const config = setConfig(loadConfig())
if (config.databaseUrl) await (await postgresSide()).openPostgres(config.databaseUrl, { listen: false })
else openDatabase(config.databasePath)
const hash = await Bun.password.hash(BENCH_PASSWORD, PASSWORD_PARAMS)
Bun.password.hash = async () => hash

const users: { id: string; token: string; email: string }[] = []
for (let i = 0; i < count; i++) {
  const email = `bench-user-${i}@example.test`
  const user = await createVerifiedUser({ email, password: BENCH_PASSWORD, username: `benchuser${i}` })
  const { token } = await createSession(user.id, { platform: 'bench' })
  users.push({ id: user.id, token, email })
}
await Bun.write(out, JSON.stringify({ users, hash }))
await closeDatabase()
