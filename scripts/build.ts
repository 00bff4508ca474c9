// Builds the single binary dist/server (server + CLI, migrations and docs assets embedded).
// Not --minify: identifier minification breaks Elysia's macro resolves (notes/STACK.md); whitespace+syntax is safe.
// --bytecode (with ESM output) precompiles the bundle: the binary answers /healthz in about half the time.
const outfile = process.argv[2] ?? 'dist/server'
const proc = Bun.spawnSync(
  [
    process.execPath, 'build', 'src/main.ts', '--compile', '--bytecode', '--format=esm', '--minify-whitespace', '--minify-syntax', '--sourcemap',
    '--no-compile-autoload-dotenv', '--no-compile-autoload-bunfig', '--outfile', outfile,
  ],
  { stdout: 'inherit', stderr: 'inherit' },
)
process.exit(proc.exitCode ?? 1)
