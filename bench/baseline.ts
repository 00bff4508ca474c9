// The baseline: a bare Bun.serve answering a small JSON body.
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ status: 'ok' }) })
console.log(`baseline http://127.0.0.1:${server.port}`)
