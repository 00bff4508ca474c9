// Builds the SDK (client/): client/dist/index.js (ES module, minified, for browsers, Bun and Node alike) and its
// declarations (client/dist/*.d.ts, by tsc), plus the voice entry (client/dist/voice.js) apart from the core. Prints
// the core's size minified and gzipped, and fails past its budget (25 KB: REST, accounts, Gateway, lobbies).
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'

export const CORE_BUDGET_BYTES = 25 * 1024
const root = join(import.meta.dir, '..')
const client = join(root, 'client')
const DIST = join(client, 'dist')

/**
 * `declarations: false` skips tsc (tests that only run the JavaScript); `outdir` builds elsewhere than client/dist
 * (tests, which may run side by side).
 */
export async function buildClient(
  options: { quiet?: boolean; declarations?: boolean; outdir?: string } = {},
): Promise<{ core: number; gzip: number }> {
  const dist = options.outdir ?? DIST
  rmSync(dist, { recursive: true, force: true })
  const entries = ['index.ts', 'voice.ts'].map((f) => join(client, 'src', f)).filter((f) => existsSync(f))
  const built = await Bun.build({
    entrypoints: entries,
    outdir: dist,
    format: 'esm',
    target: 'browser',
    minify: true,
    // Voice (lobby.voice.join() imports it) is a chunk of its own: the core does not carry WebRTC code.
    splitting: true,
    sourcemap: 'linked',
  })
  if (!built.success) throw new AggregateError(built.logs, 'bun build of client/ failed')
  if (options.declarations !== false) {
    const tsc = Bun.spawnSync(
      [
        process.execPath,
        join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(client, 'tsconfig.json'),
        '--outDir',
        dist,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    if (tsc.exitCode !== 0) throw new Error(`tsc (declarations) failed:\n${tsc.stdout}${tsc.stderr}`)
  }
  // The core: index.js and the chunks it imports statically (not those it loads with import()).
  const coreFiles = new Set(['index.js'])
  for (const file of coreFiles) {
    const text = await Bun.file(join(dist, file)).text()
    for (const [, chunk] of text.matchAll(/(?:^|[;}])\s*import\s*(?:[\w${}\s,*]+from\s*)?["']\.\/([\w.-]+\.js)["']/g))
      coreFiles.add(chunk)
  }
  const code = Buffer.concat(await Promise.all([...coreFiles].map(async (f) => Bun.file(join(dist, f)).bytes())))
  const gzip = Bun.gzipSync(code, { level: 9 }).length
  if (!options.quiet) {
    console.log(
      `client/dist core (${[...coreFiles].join(' + ')}): ${(code.length / 1024).toFixed(1)} KB minified, ${(gzip / 1024).toFixed(1)} KB gzipped (budget ${CORE_BUDGET_BYTES / 1024} KB)`,
    )
    if (existsSync(join(dist, 'voice.js'))) {
      const voice = await Bun.file(join(dist, 'voice.js')).bytes()
      console.log(
        `client/dist/voice.js: ${(voice.length / 1024).toFixed(1)} KB minified, ${(Bun.gzipSync(voice, { level: 9 }).length / 1024).toFixed(1)} KB gzipped (apart from the core)`,
      )
    }
  }
  if (gzip > CORE_BUDGET_BYTES)
    throw new Error(`the SDK's core is ${gzip} bytes gzipped, over its ${CORE_BUDGET_BYTES} budget`)
  return { core: code.length, gzip }
}

if (import.meta.main) {
  try {
    await buildClient()
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  }
}
