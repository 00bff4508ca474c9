// The version this binary reports (`lobby-server --version`, the listening line, /metrics) and records in a database
// it migrates. The build (scripts/build-flags.ts) stamps the commit, the build date and the target in with --define;
// run from source they are the checkout's commit (git), today and this machine.
import { version } from '../package.json'

// Replaced by the build's --define; not defined at all when run from source (hence the typeof checks).
declare const LOBBY_BUILD_COMMIT: string
declare const LOBBY_BUILD_DATE: string
declare const LOBBY_BUILD_TARGET: string

export const VERSION: string = version

export type BuildInfo = { version: string; commit: string; built: string; target: string }

/** The checkout's short commit, with `-dirty` when tracked files differ from it; undefined without git or a checkout. */
export function gitCommit(): string | undefined {
  try {
    const git = (...args: string[]) =>
      Bun.spawnSync(['git', ...args], { cwd: import.meta.dir, stdin: 'ignore', stderr: 'ignore' })
    const head = git('rev-parse', '--short', 'HEAD')
    if (head.exitCode !== 0) return undefined
    const dirty = git('status', '--porcelain', '--untracked-files=no')
    return head.stdout.toString().trim() + (dirty.exitCode === 0 && dirty.stdout.length > 0 ? '-dirty' : '')
  } catch {
    return undefined
  }
}

/** This machine as a release names it: linux-x64, linux-arm64, darwin-arm64, windows-x64, ... */
export function hostTarget(): string {
  return `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`
}

let info: BuildInfo | undefined

/** Version, commit, build date (UTC, YYYY-MM-DD) and target. */
export function buildInfo(): BuildInfo {
  info ??= {
    version: VERSION,
    commit: typeof LOBBY_BUILD_COMMIT === 'string' ? LOBBY_BUILD_COMMIT : (gitCommit() ?? 'source'),
    built: typeof LOBBY_BUILD_DATE === 'string' ? LOBBY_BUILD_DATE : new Date().toISOString().slice(0, 10),
    target: typeof LOBBY_BUILD_TARGET === 'string' ? LOBBY_BUILD_TARGET : hostTarget(),
  }
  return info
}

/** `lobby-server 0.1.0 (abc1234, 2026-11-25, linux-arm64)` */
export function versionLine(): string {
  const { commit, built, target } = buildInfo()
  return `lobby-server ${VERSION} (${commit}, ${built}, ${target})`
}
