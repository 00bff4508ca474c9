// Builds the single binary dist/lobby-server (server + CLI, migrations and docs assets embedded).
// Not --minify: identifier minification breaks Elysia's macro resolves (notes/STACK.md); whitespace+syntax is safe.
// --bytecode (with ESM output) precompiles the bundle: the binary answers /healthz in about half the time.
// --splitting puts what is loaded with import() or a require() inside a function (WebAuthn, voice, mail, password
// dictionaries) in chunks of their own, read and evaluated when first used: without it every module of the bundle is
// loaded at start, used or not (~50 ms here).
const outfile = process.argv[2] ?? 'dist/lobby-server'
const proc = Bun.spawnSync(
  [
    process.execPath,
    'build',
    'src/main.ts',
    '--compile',
    '--bytecode',
    '--format=esm',
    '--splitting',
    '--minify-whitespace',
    '--minify-syntax',
    '--sourcemap',
    '--no-compile-autoload-dotenv',
    '--no-compile-autoload-bunfig',
    '--outfile',
    outfile,
  ],
  { stdout: 'inherit', stderr: 'inherit' },
)
process.exit(proc.exitCode ?? 1)
