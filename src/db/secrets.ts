// Server-held keys: 32 random bytes per name, generated on first use and kept in the database.
import { eq } from 'drizzle-orm'
import { randomBytes } from 'node:crypto'
import { whenOpened, write } from './client'
import { serverSecrets } from './tables'

const cache = new Map<string, Buffer>()

export async function getSecret(name: string): Promise<Buffer> {
  const cached = cache.get(name)
  if (cached) return cached
  const row = await write((w) => {
    w.insert(serverSecrets)
      .values({ name, value: randomBytes(32).toString('base64') })
      .onConflictDoNothing()
      .run()
    return w.select().from(serverSecrets).where(eq(serverSecrets.name, name)).get()!
  })
  const key = Buffer.from(row.value, 'base64')
  cache.set(name, key)
  return key
}

whenOpened(() => cache.clear())
