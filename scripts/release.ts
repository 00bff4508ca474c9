// `bun run release [DIR]`: a binary per target into DIR (dist/release by default), named
// lobby-server-<version>-<target>[.exe], built with the flags of `bun run build` (scripts/build-flags.ts), and a
// SHA256SUMS file over them that `sha256sum -c SHA256SUMS` checks. Cross-compiling fetches each target's Bun runtime
// from the npm registry once (cached). What to upload: docs/RELEASING.md.
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { VERSION } from '../src/version'
import { BUILD_DATE, buildFlags, COMMIT, TARGETS } from './build-flags'

const dir = process.argv[2] ?? 'dist/release'
mkdirSync(dir, { recursive: true })
// Files of an earlier run (any version) go: SHA256SUMS must cover exactly what the folder holds.
for (const name of readdirSync(dir)) {
  if (name.startsWith('lobby-server-') || name === 'SHA256SUMS') rmSync(join(dir, name), { force: true })
}

console.log(`lobby-server ${VERSION}, commit ${COMMIT}, built ${BUILD_DATE}: ${TARGETS.length} targets into ${dir}`)
if (COMMIT.endsWith('-dirty'))
  console.warn('warning: tracked files differ from the commit; a release is built from a clean checkout')
const names: string[] = []
for (const target of TARGETS) {
  const name = `lobby-server-${VERSION}-${target}${target.startsWith('windows') ? '.exe' : ''}`
  // Each build in a folder of its own: with --splitting, `bun build --compile --sourcemap` also writes the chunks'
  // .map files beside the binary (they are embedded too); only the binary is kept.
  const work = mkdtempSync(join(tmpdir(), 'lobby-release-'))
  try {
    const started = performance.now()
    const proc = Bun.spawnSync(
      [process.execPath, 'build', 'src/main.ts', ...buildFlags(target), '--outfile', join(work, name)],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    if (proc.exitCode !== 0) {
      process.stderr.write(proc.stdout.toString() + proc.stderr.toString())
      console.error(`error: the build for ${target} failed (exit ${proc.exitCode})`)
      process.exit(1)
    }
    renameSync(join(work, name), join(dir, name))
    const mb = (statSync(join(dir, name)).size / 1e6).toFixed(1)
    console.log(`${name}  ${mb} MB  ${((performance.now() - started) / 1000).toFixed(1)} s`)
    names.push(name)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const lines: string[] = []
for (const name of names) {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(join(dir, name)).stream()) hasher.update(chunk)
  // Two spaces: sha256sum's text-mode line, which `sha256sum -c` (and `shasum -a 256 -c`) read.
  lines.push(`${hasher.digest('hex')}  ${name}`)
}
writeFileSync(join(dir, 'SHA256SUMS'), `${lines.join('\n')}\n`)
console.log(`${join(dir, 'SHA256SUMS')}: ${names.length} files; check with: cd ${dir} && sha256sum -c SHA256SUMS`)
