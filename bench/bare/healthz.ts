// Bare baseline for start-up: a plain Bun.serve on PORT answering /healthz, compiled the same way as our binary.
Bun.serve({
  port: Number(process.env.PORT),
  hostname: process.env.HOST ?? '127.0.0.1',
  fetch: () => Response.json({ status: 'ok' }),
})

export {}
