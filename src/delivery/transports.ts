// Real transports: SMTP through nodemailer when SMTP_URL is set; SMS as POST {to, body} to SMS_WEBHOOK_URL.
import type { Config } from '../config'
import { setTransports, type Email, type Sms } from '.'

// nodemailer (CommonJS, so bundled but evaluated on first require) is loaded only when SMTP is configured.
const loadNodemailer = () => require('nodemailer') as typeof import('nodemailer')

export function installTransports(config: Config): void {
  const smtp = config.smtpUrl ? loadNodemailer().createTransport(config.smtpUrl) : undefined
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
          })
          if (!r.ok) throw new Error(`SMS webhook answered ${r.status}`)
        }
      : undefined,
  })
}
