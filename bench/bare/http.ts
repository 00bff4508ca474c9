// Bare baseline for one HTTP scenario: a plain Bun.serve answering, from memory, the bytes our server answered
// (same status, same headers, same body). Argument: a JSON file { status, headers, bodyBase64 }.
const spec = (await Bun.file(process.argv[2]).json()) as {
  status: number
  headers: [string, string][]
  bodyBase64: string
}
const body = Buffer.from(spec.bodyBase64, 'base64')
const headers = spec.headers
const status = spec.status

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () => new Response(body, { status, headers }),
})
console.log(`port ${server.port}`)

export {}
