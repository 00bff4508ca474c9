// Real transports: SMTP through nodemailer when SMTP_URL is set; SMS as POST {to, body} to SMS_WEBHOOK_URL.
import type { Config } from '../config'
import { setTransports, type Email, type Sms } from '.'

// nodemailer (CommonJS, so bundled but evaluated on first require) is loaded only when SMTP is configured.
const loadNodemailer = () => require('nodemailer') as typeof import('nodemailer')

export function installTransports(config: Config): void {
  // A mail server or webhook that stops answering must not hold a delivery (and the shutdown that waits for it) for
  // nodemailer's default minutes, or forever: each step gives up after DELIVERY_TIMEOUT_MS and the row says failed.
  const timeout = config.deliveryTimeoutMs
  const smtp = config.smtpUrl
    ? loadNodemailer().createTransport({
        url: config.smtpUrl,
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout,
      })
    : undefined
  const smsUrl = config.smsWebhookUrl
  setTransports({
    email: smtp
      ? async (m: Email) => {
          await smtp.sendMail({ from: config.mailFrom, to: m.to, subject: m.subject, text: m.text })
        }
      : undefined,
    sms: smsUrl
      ? async (m: Sms) => {
          const r = await fetch(smsUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ to: m.to, body: m.body }),
            signal: AbortSignal.timeout(timeout),
          })
          if (!r.ok) throw new Error(`SMS webhook answered ${r.status}`)
        }
      : undefined,
  })
}
