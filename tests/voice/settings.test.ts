// VOICE_* settings, the announced address, TURN credentials for clients, and the bounds of our signalling ops.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { ConfigError, config, loadConfig, setConfig } from '../../src/config'
import { clock } from '../../src/core/clock'
import { MAX_CANDIDATE_CHARS, MAX_SDP_CHARS, MAX_STATES } from '../../src/voice/limits'
import { announce, clientIceServers } from '../../src/voice/network'
import { parseAnswer, parseCandidate, parseStates } from '../../src/voice/protocol'

let saved = config()
beforeEach(() => {
  saved = config()
})
afterEach(() => {
  setConfig(saved)
  clock.reset()
})

describe('VOICE_* settings', () => {
  test('defaults: no public address, any port, no TURN, calls of 25, 120 packets a second', () => {
    const c = loadConfig({})
    expect(c.voicePublicIp).toBeUndefined()
    expect(c.voicePortRange).toBeUndefined()
    expect(c.voiceTurnUrls).toEqual([])
    expect(c.voiceMaxCallSize).toBe(25)
    expect(c.voiceMaxPacketsPerSecond).toBe(120)
  })

  test('good values are read', () => {
    const c = loadConfig({
      VOICE_PUBLIC_IP: '203.0.113.7',
      VOICE_PORT_MIN: '40000',
      VOICE_PORT_MAX: '40099',
      VOICE_TURN_URLS: 'turn:turn.example.com:3478?transport=udp, turns:turn.example.com:5349',
      VOICE_TURN_USERNAME: 'u',
      VOICE_TURN_CREDENTIAL: 'p',
      VOICE_MAX_CALL_SIZE: '30',
      VOICE_MAX_PACKETS_PER_SECOND: '20',
    })
    expect(c.voicePublicIp).toBe('203.0.113.7')
    expect(c.voicePortRange).toEqual([40000, 40099])
    expect(c.voiceTurnUrls).toEqual(['turn:turn.example.com:3478?transport=udp', 'turns:turn.example.com:5349'])
    expect(c.voiceMaxCallSize).toBe(30)
    expect(c.voiceMaxPacketsPerSecond).toBe(20)
    expect(loadConfig({ VOICE_MAX_CALL_SIZE: '2' }).voiceMaxCallSize).toBe(2)
  })

  test.each([
    ['VOICE_PUBLIC_IP', { VOICE_PUBLIC_IP: 'example.com' }],
    ['VOICE_PORT_MAX', { VOICE_PORT_MIN: '40000' }],
    ['VOICE_PORT_MIN', { VOICE_PORT_MAX: '40000' }],
    ['VOICE_PORT_MAX', { VOICE_PORT_MIN: '40000', VOICE_PORT_MAX: '40000' }],
    ['VOICE_PORT_MIN', { VOICE_PORT_MIN: '80', VOICE_PORT_MAX: '40000' }],
    ['VOICE_PORT_MAX', { VOICE_PORT_MIN: '40000', VOICE_PORT_MAX: '70000' }],
    ['VOICE_TURN_URLS', { VOICE_TURN_URLS: 'http://turn.example.com' }],
    ['VOICE_MAX_CALL_SIZE', { VOICE_MAX_CALL_SIZE: '31' }],
    ['VOICE_MAX_CALL_SIZE', { VOICE_MAX_CALL_SIZE: '1' }],
    ['VOICE_MAX_PACKETS_PER_SECOND', { VOICE_MAX_PACKETS_PER_SECOND: '19' }],
  ])('a bad %s stops the start with its name', (name, env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(name)
  })
})

describe('network', () => {
  const sdp = [
    'v=0',
    'm=audio 9 UDP/TLS/RTP/SAVPF 111',
    'a=candidate:1 1 udp 2116026367 127.0.0.1 40001 typ host generation 0',
    'a=candidate:2 1 udp 2116026367 10.0.0.5 40002 typ host generation 0',
    'a=candidate:3 1 udp 2116026367 10.0.0.5 40002 typ host generation 0',
    'a=mid:0',
    'm=audio 9 UDP/TLS/RTP/SAVPF 111',
    'a=candidate:2 1 udp 2116026367 10.0.0.5 40002 typ host generation 0',
    'a=mid:1',
    '',
  ].join('\r\n')

  test('without VOICE_PUBLIC_IP the offer is untouched; with it host candidates announce it', () => {
    expect(announce(sdp)).toBe(sdp)
    setConfig({ ...saved, voicePublicIp: '203.0.113.7' })
    const out = announce(sdp).split('\r\n')
    expect(out.filter((l) => l.startsWith('a=candidate'))).toEqual([
      'a=candidate:1 1 udp 2116026367 203.0.113.7 40001 typ host generation 0',
      'a=candidate:2 1 udp 2116026367 203.0.113.7 40002 typ host generation 0',
      'a=candidate:3 1 udp 2116026367 203.0.113.7 40002 typ host generation 0',
      'a=candidate:2 1 udp 2116026367 203.0.113.7 40002 typ host generation 0',
    ])
    expect(out.filter((l) => l.startsWith('a=mid'))).toEqual(['a=mid:0', 'a=mid:1'])
  })

  test('TURN servers for clients: none, static credentials, or coturn time-limited ones', () => {
    expect(clientIceServers('42')).toEqual([])
    setConfig({ ...saved, voiceTurnUrls: ['turn:t.example:3478'], voiceTurnUsername: 'u', voiceTurnCredential: 'p' })
    expect(clientIceServers('42')).toEqual([{ urls: ['turn:t.example:3478'], username: 'u', credential: 'p' }])
    setConfig({ ...saved, voiceTurnUrls: ['turn:t.example:3478'], voiceTurnSecret: 's3cret' })
    const [server] = clientIceServers('42')
    const [expiry, user] = server!.username!.split(':')
    expect(user).toBe('42')
    expect(Number(expiry)).toBe(clock.seconds() + 86400)
    expect(server!.credential).toBe(createHmac('sha1', 's3cret').update(server!.username!).digest('base64'))
  })
})

describe('signalling bounds', () => {
  const lobby = '1234567890123456789'

  test('op 17 reads at most 25 well-formed states; anything but an array is ignored', () => {
    const many = Array.from({ length: MAX_STATES + 5 }, () => ({ lobby_id: lobby, self_mute: true }))
    expect(parseStates(many)).toHaveLength(MAX_STATES)
    expect(parseStates([{ lobby_id: lobby, self_mute: 'yes' }, { lobby_id: 'x' }, null])).toEqual([
      { lobbyId: lobby, selfMute: false, selfDeaf: false },
    ])
    expect(parseStates({ lobby_id: lobby })).toBeNull()
  })

  test('an answer is a non-empty SDP up to 15 KiB, as a string or a description', () => {
    expect(parseAnswer({ lobby_id: lobby, sdp: 'x'.repeat(MAX_SDP_CHARS) })?.sdp).toHaveLength(MAX_SDP_CHARS)
    expect(parseAnswer({ lobby_id: lobby, sdp: 'x'.repeat(MAX_SDP_CHARS + 1) })).toBeNull()
    expect(parseAnswer({ lobby_id: lobby, sdp: { type: 'answer', sdp: 'v=0' }, revision: 3 })).toEqual({
      lobbyId: lobby,
      sdp: 'v=0',
      revision: 3,
    })
    expect(parseAnswer({ lobby_id: lobby, sdp: { type: 'offer', sdp: 'v=0' } })).toBeNull()
    expect(parseAnswer({ lobby_id: lobby, sdp: '' })).toBeNull()
    expect(parseAnswer({ lobby_id: 'nope', sdp: 'v=0' })).toBeNull()
  })

  test('a candidate is up to 512 characters; null or empty means the end of candidates', () => {
    const c = (candidate: string) =>
      parseCandidate({ lobby_id: lobby, candidate: { candidate, sdpMid: '0', sdpMLineIndex: 0 } })
    expect(c('x'.repeat(MAX_CANDIDATE_CHARS))?.candidate?.candidate).toHaveLength(MAX_CANDIDATE_CHARS)
    expect(c('x'.repeat(MAX_CANDIDATE_CHARS + 1))).toBeNull()
    expect(c('')).toEqual({ lobbyId: lobby, candidate: null })
    expect(parseCandidate({ lobby_id: lobby, candidate: null })).toEqual({ lobbyId: lobby, candidate: null })
    expect(parseCandidate({ lobby_id: lobby, candidate: { candidate: 'a', sdpMLineIndex: -1, sdpMid: 5 } })).toEqual({
      lobbyId: lobby,
      candidate: { candidate: 'a' },
    })
  })
})
