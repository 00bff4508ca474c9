// The build's one list of flags (scripts/build-flags.ts), shared by `bun run build` and `bun run release`: the flags
// the binary is tested with, the stamps --version reads, a target per release file. Building the seven targets is
// CI's (.ci/run); this checks the list without building.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUILD_DATE, buildFlags, COMMIT, TARGETS } from '../../scripts/build-flags'

const scripts = join(import.meta.dir, '../../scripts')

describe('build flags', () => {
  test('the flags the binary is tested with; whitespace and syntax minified, never identifiers (--minify)', () => {
    const flags = buildFlags()
    for (const flag of [
      '--compile',
      '--bytecode',
      '--format=esm',
      '--splitting',
      '--minify-whitespace',
      '--minify-syntax',
    ])
      expect(flags).toContain(flag)
    expect(flags).not.toContain('--minify')
    expect(flags).not.toContain('--minify-identifiers')
    expect(flags.some((f) => f.startsWith('--target'))).toBe(false)
  })

  test('the commit, the build date and the target are stamped in; a release target picks its Bun runtime', () => {
    const defines = (flags: string[]) =>
      Object.fromEntries(flags.flatMap((f, i) => (flags[i - 1] === '--define' ? [f.split('=')] : [])))
    expect(defines(buildFlags())).toEqual({
      LOBBY_BUILD_COMMIT: JSON.stringify(COMMIT),
      LOBBY_BUILD_DATE: JSON.stringify(BUILD_DATE),
      LOBBY_BUILD_TARGET: JSON.stringify(`${process.platform}-${process.arch}`),
    })
    expect(BUILD_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    const arm = buildFlags('linux-arm64')
    expect(arm).toContain('--target=bun-linux-arm64')
    expect(defines(arm).LOBBY_BUILD_TARGET).toBe('"linux-arm64"')
    expect(arm.filter((f) => !f.startsWith('--target') && !f.startsWith('LOBBY_BUILD_TARGET'))).toEqual(
      buildFlags().filter((f) => !f.startsWith('LOBBY_BUILD_TARGET')),
    )
  })

  test('seven targets; build.ts and release.ts take the one list and spell no flag of their own', () => {
    expect(([...TARGETS] as string[]).sort()).toEqual(
      [
        'darwin-arm64',
        'darwin-x64',
        'linux-arm64',
        'linux-x64',
        'linux-x64-baseline',
        'linux-x64-musl',
        'windows-x64',
      ].sort(),
    )
    for (const file of ['build.ts', 'release.ts']) {
      const text = readFileSync(join(scripts, file), 'utf8')
      expect(text).toContain("from './build-flags'")
      expect(text).toContain('...buildFlags(')
      expect(text).not.toMatch(/'--(compile|bytecode|minify|splitting|sourcemap|format|target|define)/)
    }
  })
})
