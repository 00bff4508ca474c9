// Real delivery: an SMTP server on loopback receives the mails, an HTTP sink receives the texts.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { SMTPServer } from 'smtp-server'
import { config } from '../../src/config'
import { readOutbox, retryPendingMessages, sendEmail } from '../../src/delivery'
import { insertOutbox } from '../../src/delivery/store'
import { clock } from '../../src/core/clock'
import { transaction } from '../../src/db/client'
import { changeEmail } from '../mfa/helpers'
import { installTransports } from '../../src/delivery/transports'
import { api, makeUser, resetWorld } from '../helpers'
import { registerUser, uniqueEmail, withConfig } from './helpers'

type Mail = { to: string[]; raw: string }
const mails: Mail[] = []
const texts: { to: string; body: string }[] = []
let smtp: SMTPServer
let smtpPort = 0
let sink: ReturnType<typeof Bun.serve>
let sinkStatus = 200
let sinkHangs = false

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = ''
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
  smtpPort = (smtp.server.address() as { port: number }).port
  sink = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      texts.push((await request.json()) as { to: string; body: string })
      if (sinkHangs) return new Promise<Response>(() => {})
      return new Response(null, { status: sinkStatus })
    },
  })
})

afterAll(async () => {
  installTransports(config())
  sink.stop(true)
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})
afterEach(resetWorld)

const decoded = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))

async function withTransports<T>(fn: () => Promise<T>): Promise<T> {
  return withConfig(
    { smtpUrl: `smtp://127.0.0.1:${smtpPort}`, smsWebhookUrl: `http://127.0.0.1:${sink.port}/sms` },
    async () => {
      installTransports(config())
      try {
        return await fn()
      } finally {
        installTransports({ ...config(), smtpUrl: undefined, smsWebhookUrl: undefined })
      }
    },
  )
}

describe('delivery', () => {
  test('the verification mail arrives over SMTP and its link verifies the address', async () => {
    await withTransports(async () => {
      const { r, email } = await registerUser()
      expect(r.status).toBe(200)
      const mail = mails.find((m) => m.to.includes(email))
      expect(mail).toBeDefined()
      const text = decoded(mail!.raw)
      expect(text).toContain(`${config().webUrl}/verify#token=`)
      const token = decodeURIComponent(/\/verify#token=([^\s]+)/.exec(text)![1])
      expect((await api('POST', '/auth/verify', { body: { token } })).status).toBe(200)
      expect((await api('GET', '/users/@me', { token: r.body.token })).body.verified).toBe(true)
      const [row] = await readOutbox(email)
      expect(row.status).toBe('sent')
      expect(row.body).not.toContain(token) // a delivered link is not kept in the database
    })
  })

  test('the password reset mail arrives over SMTP and its link resets the password', async () => {
    await withTransports(async () => {
      const { email } = await registerUser()
      expect((await api('POST', '/auth/forgot', { body: { login: email } })).status).toBe(204)
      let mail: Mail | undefined
      for (let i = 0; i < 100 && !mail; i++) {
        mail = mails.find((m) => m.to.includes(email) && decoded(m.raw).includes('/reset#token='))
        if (!mail) await Bun.sleep(20) // the reset mail is sent without holding up the answer
      }
      const token = decodeURIComponent(/\/reset#token=([^\s]+)/.exec(decoded(mail!.raw))![1])
      const r = await api('POST', '/auth/reset', { body: { token, password: 'a brand new passphrase' } })
      expect(r.status).toBe(200)
      expect(
        (await api('POST', '/auth/login', { body: { login: email, password: 'a brand new passphrase' } })).status,
      ).toBe(200)
    })
  })

  test('a phone code arrives at the SMS webhook as {to, body} and verifies', async () => {
    await withTransports(async () => {
      const phone = `+1555${Math.floor(1e6 + Math.random() * 8e6)}`
      expect((await api('POST', '/auth/register/phone', { body: { phone } })).status).toBe(204)
      const text = texts.find((t) => t.to === phone)
      expect(text).toBeDefined()
      const code = /(\d{6})/.exec(text!.body)![1]
      const r = await api('POST', '/phone-verifications/verify', { body: { phone, code } })
      expect(r.status).toBe(200)
      expect(typeof r.body.token).toBe('string')
    })
  })

  test('a failing webhook is recorded as failed, not a 500', async () => {
    await withTransports(async () => {
      sinkStatus = 500
      try {
        const phone = `+1555${Math.floor(1e6 + Math.random() * 8e6)}`
        expect((await api('POST', '/auth/register/phone', { body: { phone } })).status).toBe(204)
        expect((await readOutbox(phone))[0].status).toBe('failed')
      } finally {
        sinkStatus = 200
      }
    })
  })

  test('a webhook that never answers is given up after DELIVERY_TIMEOUT_MS: failed, and nothing waits on it', async () => {
    await withConfig({ deliveryTimeoutMs: 300 }, () =>
      withTransports(async () => {
        sinkHangs = true
        try {
          const phone = `+1555${Math.floor(1e6 + Math.random() * 8e6)}`
          expect((await api('POST', '/auth/register/phone', { body: { phone } })).status).toBe(204)
          expect((await readOutbox(phone))[0].status).toBe('failed')
        } finally {
          sinkHangs = false
        }
      }),
    )
  })

  test('without transports, messages are stored in the outbox', async () => {
    const { email } = await registerUser()
    const [row] = await readOutbox(email)
    expect(row).toMatchObject({ channel: 'email', status: 'stored' })
    expect(row.body).toContain('/verify#token=')
  })

  test("a transaction's mails are its rows: pending until its COMMIT hands them over, none if it rolls back", async () => {
    await withTransports(async () => {
      const user = await makeUser()
      const next = uniqueEmail('moved')
      await changeEmail(user, next)
      // The answer does not wait for SMTP; both mails arrive once the change committed.
      for (
        let i = 0;
        i < 100 && !(mails.some((m) => m.to.includes(next)) && mails.some((m) => m.to.includes(user.email)));
        i++
      )
        await Bun.sleep(20)
      expect(decoded(mails.find((m) => m.to.includes(user.email))!.raw)).toContain('/wasntme/')
      expect(mails.some((m) => m.to.includes(next))).toBe(true)
      expect((await readOutbox(user.email)).map((r) => r.status)).toEqual(['sent'])
      expect((await readOutbox(next)).map((r) => r.status)).toEqual(['sent'])

      const nobody = uniqueEmail('rolled-back')
      await expect(
        transaction(async () => {
          await sendEmail({ to: nobody, subject: 'never', text: 'never sent' })
          throw new Error('rolled back')
        }),
      ).rejects.toThrow('rolled back')
      await Bun.sleep(100)
      expect(mails.some((m) => m.to.includes(nobody))).toBe(false)
      expect(await readOutbox(nobody)).toEqual([])
    })
  })

  test('a message a crash left pending is sent by the sweep, once, even by two sweeps at a time', async () => {
    await withTransports(async () => {
      const to = uniqueEmail('pending')
      const row = { channel: 'email' as const, to, subject: 'left behind', status: 'pending' }
      await insertOutbox({ ...row, id: '1', body: 'written before a crash', createdAt: clock.now() - 120_000 })
      await insertOutbox({ ...row, id: '2', body: 'still being handed over', createdAt: clock.now() })
      await Promise.all([retryPendingMessages(), retryPendingMessages()])
      const got = mails.filter((m) => m.to.includes(to))
      expect(got).toHaveLength(1)
      expect(decoded(got[0].raw)).toContain('written before a crash')
      const rows = await readOutbox(to)
      expect(rows.map((r) => [r.id, r.status])).toEqual([
        ['2', 'pending'],
        ['1', 'sent'],
      ])
    })
  })
})
