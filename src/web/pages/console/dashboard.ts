// The console's dashboard (#/dashboard): the server's numbers, and the last hour's lobby messages a minute as an
// inline SVG line (no chart library: sixty points need none).
import type { RouteResponse } from '../../../../client/src/index'
import { $, submitting } from '../lib/ui'
import { admin, only, stat } from './common'

type Dashboard = RouteResponse<'get', '/admin/dashboard'>
const form = $<HTMLFormElement>('#dashboard-form')
const SVG = 'http://www.w3.org/2000/svg'

/** A line over `values` (oldest first), scaled to its highest point; described for screen readers. */
export function sparkline(values: number[], label: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg')
  const width = Math.max(1, values.length - 1)
  const top = Math.max(1, ...values)
  svg.setAttribute('viewBox', `0 0 ${width} 100`)
  svg.setAttribute('preserveAspectRatio', 'none')
  svg.setAttribute('class', 'spark')
  svg.setAttribute('role', 'img')
  svg.setAttribute('aria-label', label)
  const line = document.createElementNS(SVG, 'polyline')
  line.setAttribute('points', values.map((v, i) => `${i},${(100 - (v / top) * 96 - 2).toFixed(1)}`).join(' '))
  svg.append(line)
  return svg
}

async function load() {
  const d = await admin<Dashboard>('GET', '/dashboard')
  $('#dashboard-stats').replaceChildren(
    stat('Users', d.users),
    stat('Gateway sessions', d.gateway_sessions),
    stat('Open sockets', d.gateway_connections),
    stat('Lobbies', d.lobbies),
    stat('Messages last minute', d.messages_last_minute),
    stat('Webhook events queued', d.event_deliveries_queued),
  )
  const total = d.messages_per_minute.reduce((a, b) => a + b, 0)
  $('#dashboard-chart').replaceChildren(
    sparkline(
      d.messages_per_minute,
      `${total} lobby messages in the last hour, at most ${Math.max(...d.messages_per_minute)} a minute`,
    ),
  )
  const n = d.node
  $('#dashboard-node').textContent = `${n.clustered ? `Node ${n.name ?? '?'} of a cluster` : 'One node'} · ${
    n.database === 'postgresql' ? 'PostgreSQL' : 'SQLite'
  } · version ${n.version} · up ${Math.round(n.uptime_seconds / 60)} min (sockets and sessions: this node)`
}

export async function openDashboard() {
  only('dashboard')
  await submitting(form, load)
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(form, load)
})
