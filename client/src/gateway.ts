// The Gateway (phase 2 fills it): identify, heartbeat, zlib-stream, resume, reconnect, typed events.
import type { Client } from './client'
import { Emitter } from './emitter'

export type GatewayOptions = { intents?: number }

export type GatewayEvents = { ready: (data: unknown) => void }

export class Gateway extends Emitter<GatewayEvents> {
  constructor(
    protected readonly client: Client,
    protected readonly options: GatewayOptions = {},
  ) {
    super()
  }
  async connect(): Promise<void> {
    throw new Error('not implemented yet')
  }
  async close(): Promise<void> {}
}
