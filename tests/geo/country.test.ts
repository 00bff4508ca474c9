// Country of IPv4 and IPv6 addresses from the GeoLite2 tables, and the consent rule at registration: where the
// country asks for it, and wherever the country is unknown.
import { afterEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { countryOf, locationOf } from '../../src/geo/country'
import { countryOfIpv6, ipv6Words } from '../../src/geo/country-v6'
import { registerUser, withConfig } from '../auth/helpers'
import { api, resetWorld } from '../helpers'

afterEach(resetWorld)

describe('IPv6 lookups', () => {
  test('addresses in GeoLite2 IPv6 ranges get their country', () => {
    expect(countryOf('2a00:1450:4001:82a::200e')).toBe('DE')
    expect(countryOf('2001:200::1')).toBe('JP')
    expect(countryOf('2001:4860:4860::8888')).toBe('US')
    expect(countryOf('2A00:1450:4001:82A::200E')).toBe('DE') // case does not matter
    expect(locationOf('2a00:1450:4001:82a::200e')).toBe('Germany')
  })

  test('both ends of sampled ranges of the table agree with the file', () => {
    const lines = readFileSync(require.resolve('@ip-location-db/geolite2-country/geolite2-country-ipv6.csv'), 'utf8')
      .trim()
      .split('\n')
    for (let i = 0; i < lines.length; i += 997) {
      const [start, end, code] = lines[i].split(',')
      expect([start, countryOfIpv6(start)]).toEqual([start, code])
      expect([end, countryOfIpv6(end)]).toEqual([end, code])
    }
  })

  test('loopback, link-local, unique-local, documentation and malformed addresses have no country', () => {
    for (const ip of [
      '::1',
      '::',
      'fe80::1%eth0',
      'fd12:3456::1',
      '2001:db8::1',
      '1::2::3',
      '12345::',
      ':::',
      'not-an-ip',
      '2001:0db8:85a3:0000:0000:8a2e:0370:7334:1',
    ])
      expect([ip, countryOf(ip)]).toEqual([ip, null])
  })

  test('IPv4-mapped and embedded IPv4 forms parse', () => {
    expect(Array.from(ipv6Words('::ffff:8.8.8.8')!)).toEqual([0, 0, 0xffff, 0x08080808])
    expect(countryOf('::ffff:8.8.8.8')).toBe('US')
    expect(Array.from(ipv6Words('2001:db8::ff00:42:8329')!)).toEqual([0x20010db8, 0, 0xff00, 0x00428329])
  })
})

describe('location metadata and consent', () => {
  const meta = (ip: string) => api('GET', '/auth/location-metadata', { headers: { 'x-forwarded-for': ip } })

  test('an EU user on IPv6 must consent; a US user on IPv6 need not', async () => {
    await withConfig({ trustProxy: true }, async () => {
      const german = '2a00:1450:4001:82a::200e'
      expect((await meta(german)).body).toEqual({
        country_code: 'DE',
        consent_required: true,
        promotional_email_opt_in: { required: true, pre_checked: false },
      })
      const refused = await registerUser({ consent: undefined }, { 'x-forwarded-for': german })
      expect(refused.r.status).toBe(400)
      expect(refused.r.body.errors.consent._errors[0].code).toBe('CONSENT_REQUIRED')
      expect((await registerUser({ consent: true }, { 'x-forwarded-for': german })).r.status).toBe(200)
      const american = '2001:4860:4860::8888'
      expect((await meta(american)).body).toMatchObject({ country_code: 'US', consent_required: false })
      expect((await registerUser({ consent: undefined }, { 'x-forwarded-for': american })).r.status).toBe(200)
    })
  })

  test('an unknown country (private, loopback, unlisted) requires consent', async () => {
    await withConfig({ trustProxy: true }, async () => {
      for (const ip of ['10.1.2.3', '127.0.0.1', 'fd00::1', '2001:db8::1']) {
        const body = (await meta(ip)).body
        expect([ip, body.consent_required, body.promotional_email_opt_in]).toEqual([
          ip,
          true,
          { required: true, pre_checked: false },
        ])
      }
      const refused = await registerUser({ consent: undefined }, { 'x-forwarded-for': 'fd00::2' })
      expect(refused.r.body.errors.consent._errors[0].code).toBe('CONSENT_REQUIRED')
      expect((await registerUser({ consent: true }, { 'x-forwarded-for': 'fd00::2' })).r.status).toBe(200)
    })
  })
})
