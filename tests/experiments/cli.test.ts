// The CLI in child processes against the running test server's database: load (picked up by the server without a
// restart), a refused file that leaves the loaded definitions, list and show of a 50-experiment file, eval.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { api, databaseEnv, server, testDir } from '../helpers'
import { makeGuild } from '../guilds/helpers'
import { cli as run } from '../ops/process-helpers'
import { mmh3, type Def } from './helpers'

const dir = testDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** `server experiments ...` in a child process, on the running test server's database. */
async function cli(...args: string[]) {
  await server()
  return run({ ...process.env, ...databaseEnv(), LOG_LEVEL: 'silent' }, ['experiments', ...args])
}

function file(name: string, content: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

const everyone = (bucket: number) => [{ ranges: [{ bucket, rollout: [{ s: 0, e: 9999 }] }] }]

async function assignmentsOf(fingerprint: string): Promise<number[][]> {
  return (await api('GET', '/experiments', { headers: { 'x-fingerprint': fingerprint } })).body.assignments
}

/** Poll until the server's answer changes (it checks the version row at most once a second). */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (ok(value) || Date.now() > deadline) return value
    await Bun.sleep(100)
  }
}

describe('server experiments (CLI)', () => {
  test('load in another process: the running server answers with the new definitions, no restart', async () => {
    const first = await cli(
      'load',
      file('first.json', [{ name: 'cli-one', kind: 'user', revision: 1, populations: everyone(1) }]),
    )
    expect(first.code).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ loaded: 1, warnings: [] })
    const { fingerprint } = (await api('GET', '/experiments')).body
    const id = fingerprint.split('.')[0]
    const seen = await until(
      () => assignmentsOf(fingerprint),
      (a) => a.length === 1 && a[0][0] === mmh3('cli-one'),
    )
    expect(seen).toEqual([[mmh3('cli-one'), 1, 1, -1, 0, mmh3(`cli-one:${id}`) % 10000, 0, 0]])

    const second = await cli(
      'load',
      file('second.json', [
        { name: 'cli-one', kind: 'user', revision: 2, populations: everyone(3) },
        { name: 'cli-two', kind: 'user', revision: 1, populations: everyone(0) },
      ]),
    )
    expect(second.code).toBe(0)
    const changed = await until(
      () => assignmentsOf(fingerprint),
      (a) => a.length === 2,
    )
    expect(changed).toEqual([
      [mmh3('cli-one'), 2, 3, -1, 0, mmh3(`cli-one:${id}`) % 10000, 0, 0],
      [mmh3('cli-two'), 1, 0, -1, 0, mmh3(`cli-two:${id}`) % 10000, 0, 0],
    ])

    // Another process evaluates the same definitions from the database the same way.
    const evaluated = await cli('eval', 'cli-one', '--user', id)
    expect(JSON.parse(evaluated.stdout)).toEqual({
      experiment: 'cli-one',
      kind: 'user',
      resource_id: id,
      bucket: 3,
      population: 0,
      position: changed[0][5],
      override: false,
    })
  })

  test('a bad file is refused whole with the element and the field named; the loaded definitions stay', async () => {
    expect(
      (await cli('load', file('good.json', [{ name: 'stays', kind: 'user', revision: 1, populations: everyone(1) }])))
        .code,
    ).toBe(0)
    const bad = [
      { name: 'a', kind: 'user', revision: 1, populations: [] },
      { name: 'b', kind: 'user', revision: 1, populations: [] },
      { name: 'c', kind: 'user', revision: 1, populations: [] },
      {
        name: 'd',
        kind: 'user',
        revision: 1,
        populations: [
          {
            ranges: [
              { bucket: 0, rollout: [{ s: 0, e: 9 }] },
              { bucket: 1, rollout: [{ s: 10, e: 10000 }] },
            ],
          },
        ],
      },
    ]
    const r = await cli('load', file('bad.json', bad))
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('[3].populations[0].ranges[1].rollout[0].e: must be ≤ 9999')
    expect(r.stdout).toBe('')
    expect(JSON.parse((await cli('list')).stdout).map((d: { name: string }) => d.name)).toEqual(['stays'])
    const notJson = await cli('load', file('broken.json', '[{"name": '))
    expect(notJson.code).toBe(1)
    expect(notJson.stderr).toContain('not valid JSON')
    expect((await cli('load', join(dir, 'missing.json'))).stderr).toContain('no such file')
    expect((await cli('load')).code).toBe(2)
  })

  test('50 experiments: load, then list and show give them back', async () => {
    const defs: Def[] = Array.from({ length: 50 }, (_, i) => ({
      name: `2025-08_cli_${i}`,
      kind: i % 5 === 0 ? 'guild' : 'user',
      revision: i,
      ...(i % 7 === 0 ? { trigger_debugging: true } : {}),
      populations: [
        {
          ranges: [
            { bucket: i % 3, rollout: [{ s: 0, e: 9999 - i }] },
            { bucket: -1, rollout: [{ s: 10000 - i, e: 9999 }] },
          ].filter((r) => r.rollout[0].s <= r.rollout[0].e),
          ...(i % 5 === 0 ? { filters: { guild_ids: { guild_ids: [String(i + 1)] } } } : {}),
        },
      ],
      overrides: i % 2 ? [{ b: 1, k: [String(10 ** 17 + i)] }] : [],
    }))
    const loaded = await cli('load', file('fifty.json', defs))
    expect(JSON.parse(loaded.stdout)).toMatchObject({ loaded: 50, warnings: [] })
    const list = JSON.parse((await cli('list')).stdout)
    expect(
      list.map((d: { name: string; kind: string; revision: number; hash: number }) => [
        d.name,
        d.kind,
        d.revision,
        d.hash,
      ]),
    ).toEqual(defs.map((d) => [d.name, d.kind, d.revision, mmh3(d.name)]))
    for (const i of [0, 17, 49]) expect(JSON.parse((await cli('show', defs[i].name)).stdout)).toEqual(defs[i])
    const unknown = await cli('show', 'nope')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no experiment named "nope"')
  })

  test('eval NAME --guild ID prints bucket, population and position for a server', async () => {
    const { guild } = await makeGuild()
    expect(
      (
        await cli(
          'load',
          file('guild.json', [
            {
              name: 'cli-guild',
              kind: 'guild',
              revision: 1,
              populations: [
                { ranges: [{ bucket: 2, rollout: [{ s: 0, e: 9999 }] }], filters: { guild_ids: { guild_ids: ['1'] } } },
                { ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }] },
              ],
            },
          ]),
        )
      ).code,
    ).toBe(0)
    const r = await cli('eval', 'cli-guild', '--guild', guild.id)
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      experiment: 'cli-guild',
      kind: 'guild',
      resource_id: guild.id,
      bucket: 1,
      population: 1,
      position: mmh3(`cli-guild:${guild.id}`) % 10000,
      override: false,
    })
    const missing = await cli('eval', 'cli-guild', '--guild', '1')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('no server with ID 1')
    expect((await cli('eval', 'cli-guild', '--user', '5')).stderr).toContain('give --guild ID')
  })
})
