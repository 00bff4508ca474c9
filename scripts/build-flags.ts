// The flags of every build of the binary: `bun run build` (scripts/build.ts) and `bun run release`
// (scripts/release.ts) both take them from here, so a release is built exactly as the binary CI tests.
// Not --minify: identifier minification breaks Elysia's macro resolves (notes/STACK.md); whitespace+syntax is safe.
// --bytecode (with ESM output) precompiles the bundle: the binary answers /healthz in about half the time.
// --splitting puts what is loaded with import() or a require() inside a function (WebAuthn, voice, mail, password
// dictionaries) in chunks of their own, read and evaluated when first used: without it every module of the bundle is
// loaded at start, used or not (~50 ms here).
// --define stamps the commit, the build date and the target in (src/version.ts: `lobby-server --version`).
import { gitCommit, hostTarget } from '../src/version'

/** The release targets, as Bun names them without the `bun-` prefix. */
export const TARGETS = [
  'linux-x64',
  'linux-x64-baseline',
  'linux-arm64',
  'linux-x64-musl',
  'darwin-x64',
  'darwin-arm64',
  'windows-x64',
] as const

/** UTC, YYYY-MM-DD; SOURCE_DATE_EPOCH (seconds) when set, for reproducible builds. */
export const BUILD_DATE = new Date(
  process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now(),
)
  .toISOString()
  .slice(0, 10)
export const COMMIT = gitCommit() ?? 'unknown'

/** `bun build src/main.ts <flags> --outfile FILE`; with a target, a cross-compiled binary for it. */
export function buildFlags(target?: string): string[] {
  return [
    '--compile',
    '--bytecode',
    '--format=esm',
    '--splitting',
    '--minify-whitespace',
    '--minify-syntax',
    '--sourcemap',
    '--no-compile-autoload-dotenv',
    '--no-compile-autoload-bunfig',
    ...(target ? [`--target=bun-${target}`] : []),
    '--define',
    `LOBBY_BUILD_COMMIT=${JSON.stringify(COMMIT)}`,
    '--define',
    `LOBBY_BUILD_DATE=${JSON.stringify(BUILD_DATE)}`,
    '--define',
    `LOBBY_BUILD_TARGET=${JSON.stringify(target ?? hostTarget())}`,
  ]
}
