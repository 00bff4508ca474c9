// Lobbies as live objects (phase 2 fills it).
import type { Client } from './client'

export class Lobbies {
  constructor(protected readonly client: Client) {}
  closeAll(): void {}
}
