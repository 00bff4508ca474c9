import { expect, test } from 'bun:test'
import { ALL_PERMISSIONS, Permission as P } from '../../src/core/discord'
import { computePermissions, DEFAULT_EVERYONE, parsePermissions } from '../../src/guilds/permissions'

test.each([
  ['owner has everything whatever the roles', { isOwner: true, everyone: 0n, roles: [] }, ALL_PERMISSIONS],
  ['@everyone alone', { isOwner: false, everyone: P.VIEW_CHANNEL, roles: [] }, P.VIEW_CHANNEL],
  [
    'OR of roles',
    { isOwner: false, everyone: P.VIEW_CHANNEL, roles: [P.SEND_MESSAGES, P.MANAGE_CHANNELS] },
    P.VIEW_CHANNEL | P.SEND_MESSAGES | P.MANAGE_CHANNELS,
  ],
  ['ADMINISTRATOR on a role grants all', { isOwner: false, everyone: 0n, roles: [P.ADMINISTRATOR] }, ALL_PERMISSIONS],
  ['ADMINISTRATOR on @everyone grants all', { isOwner: false, everyone: P.ADMINISTRATOR, roles: [] }, ALL_PERMISSIONS],
  ['nothing', { isOwner: false, everyone: 0n, roles: [] }, 0n],
] as const)('%s', (_name, input, expected) => {
  expect(computePermissions({ ...input, roles: [...input.roles] })).toBe(expected)
})

test('Discord bit positions', () => {
  expect(P.CREATE_INSTANT_INVITE).toBe(1n)
  expect(P.ADMINISTRATOR).toBe(8n)
  expect(P.MANAGE_CHANNELS).toBe(16n)
  expect(P.MANAGE_GUILD).toBe(32n)
  expect(P.VIEW_CHANNEL).toBe(1024n)
  expect(P.SEND_MESSAGES).toBe(2048n)
  expect(P.READ_MESSAGE_HISTORY).toBe(65536n)
  expect(DEFAULT_EVERYONE & P.ADMINISTRATOR).toBe(0n)
  expect(DEFAULT_EVERYONE & P.MANAGE_CHANNELS).toBe(0n)
})

test('permission strings are parsed strictly', () => {
  expect(parsePermissions('2048')).toBe(2048n)
  expect(parsePermissions('-1')).toBeNull()
  expect(parsePermissions('abc')).toBeNull()
  expect(parsePermissions((1n << 60n).toString())).toBeNull()
})
