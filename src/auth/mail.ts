// The e-mails and texts the account flows send, with the links the spec names. Tokens ride in the URL fragment
// so they never reach server logs or Referer headers.
import { config } from '../config'
import { sendEmail } from '../delivery'

const link = (path: string, token: string) => `${config().webUrl}/${path}#token=${encodeURIComponent(token)}`

export function mailEmailVerification(to: string, token: string) {
  return sendEmail({
    to,
    subject: 'Verify your e-mail address',
    text: `Confirm this address to finish setting up your account:\n\n${link('verify', token)}\n\nIf you did not create an account, ignore this e-mail.`,
  })
}

export function mailNewEmailVerification(to: string, token: string) {
  return sendEmail({
    to,
    subject: 'Verify your new e-mail address',
    text: `This address is now the e-mail address of your account. Confirm it:\n\n${link('verify', token)}\n\nIf you did not make this change, ignore this e-mail.`,
  })
}

export function mailLoginLocation(to: string, token: string, ip: string, location: string) {
  return sendEmail({
    to,
    subject: 'New login location detected',
    text: `Someone tried to log in to your account from a new location (${location}, IP ${ip}).\n\nIf this was you, authorize this location:\n\n${link('authorize-ip', token)}\n\nIf it was not you, change your password now.`,
  })
}

export function mailPasswordReset(to: string, token: string) {
  return sendEmail({
    to,
    subject: 'Password reset request',
    text: `Reset your password with this link (valid for one hour):\n\n${config().webUrl}/reset#token=${encodeURIComponent(token)}\n\nIf you did not ask for this, ignore this e-mail.`,
  })
}

export function mailEmailChanged(to: string, newEmail: string, revertToken: string) {
  return sendEmail({
    to,
    subject: 'Your e-mail address was changed',
    text: `The e-mail address of your account was changed to ${newEmail}.\n\nIf this wasn't you, secure your account (valid for two days):\n\n${config().webUrl}/wasntme/${encodeURIComponent(revertToken)}`,
  })
}
