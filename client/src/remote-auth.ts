// QR login: the desktop side (remote-auth gateway v2) and the mobile side. Filled by the accounts part of the SDK.
import type { Client } from './client'

export class RemoteAuth {
  constructor(protected readonly client: Client) {}
}
