// Accounts: login (with its MFA step), registration, recovery, sessions. Filled by the accounts part of the SDK.
import type { Client } from './client'

export class Auth {
  constructor(protected readonly client: Client) {}
}
