// Builds the single binary dist/lobby-server (server + CLI, migrations and docs assets embedded).
// The flags (and why each) are in scripts/build-flags.ts, shared with `bun run release`.
import { buildFlags } from './build-flags'

const outfile = process.argv[2] ?? 'dist/lobby-server'
const proc = Bun.spawnSync([process.execPath, 'build', 'src/main.ts', ...buildFlags(), '--outfile', outfile], {
  stdout: 'inherit',
  stderr: 'inherit',
})
process.exit(proc.exitCode ?? 1)
