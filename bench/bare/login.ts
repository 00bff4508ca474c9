// Bare baseline for login: a plain Bun.serve that reads the JSON body and runs Bun.password.verify against one fixed
// argon2id hash made with our parameters (src/auth/passwords.ts), then answers the bytes our login answered.
// Argument: a JSON file { status, headers, bodyBase64, hash }.
const spec = (await Bun.file(process.argv[2]).json()) as {
  status: number
  headers: [string, string][]
  bodyBase64: string
  hash: string
}
const body = Buffer.from(spec.bodyBase64, 'base64')
const { headers, status, hash } = spec

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const input = (await request.json()) as { password?: string }
    if (!(await Bun.password.verify(String(input.password), hash)))
      return new Response('{"message":"Invalid Form Body","code":50035}', { status: 400 })
    return new Response(body, { status, headers })
  },
})
console.log(`port ${server.port}`)

export {}
