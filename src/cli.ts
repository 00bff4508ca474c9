// Operator commands: `server app create --name N`, `server app list`, `server user create --email E --password P`,
// `server experiments load FILE.json` ...
// Each prints JSON on stdout so scripts can read it.
import { parseArgs } from 'node:util'
import { config } from './config'
import { closeDatabase, openDatabase } from './db/client'
import { createApplication } from './oauth2/applications'
import { listApplications } from './oauth2/store'
import { createVerifiedUser } from './accounts/users'
import { createSession } from './accounts/sessions'
import { setGuildAttributes } from './guilds/public'
import { readOutbox } from './delivery'
import { lockUser } from './auth/lock'
import { DefinitionError } from './experiments/definitions'
import { evaluateOne, listDefinitions, loadDefinitions, showDefinition, UnknownResource } from './experiments/service'

type Command = { usage: string; run: (argv: string[]) => Promise<unknown> }

const commands: Record<string, Command> = {
  'app create': {
    usage: 'app create --name NAME [--redirect-uri URI ...]',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true } } })
      if (!values.name) throw new UsageError('--name is required')
      for (const uri of values['redirect-uri'] ?? []) if (!URL.canParse(uri)) throw new UsageError(`--redirect-uri is not a URL: ${uri}`)
      return createApplication(values.name, values['redirect-uri'] ?? [])
    },
  },
  'app list': {
    usage: 'app list',
    async run() {
      const apps = listApplications()
      return apps.map((a) => ({ id: a.id, name: a.name, bot_user_id: a.botUserId, redirect_uris: a.redirectUris }))
    },
  },
  'user create': {
    usage: 'user create --email EMAIL --password PASSWORD [--username NAME]',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { email: { type: 'string' }, password: { type: 'string' }, username: { type: 'string' } } })
      if (!values.email || !values.password) throw new UsageError('--email and --password are required')
      const user = await createVerifiedUser({ email: values.email, password: values.password, username: values.username })
      const { token } = await createSession(user.id, { platform: 'cli' })
      return { id: user.id, token }
    },
  },
  outbox: {
    usage: 'outbox [--to ADDRESS] [--json]',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { to: { type: 'string' }, json: { type: 'boolean' } } })
      const rows = await readOutbox(values.to)
      if (values.json) return rows.map((r) => ({ id: r.id, channel: r.channel, to: r.to, subject: r.subject, body: r.body, status: r.status, created_at: new Date(r.createdAt).toISOString() }))
      return rows.map((r) => `${new Date(r.createdAt).toISOString()} ${r.channel} to ${r.to} [${r.status}]${r.subject ? ` ${r.subject}` : ''}\n${r.body}\n`).join('\n')
    },
  },
  'user lock': {
    usage: 'user lock --id ID',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { id: { type: 'string' } } })
      if (!values.id) throw new UsageError('--id is required')
      return lockUser(values.id)
    },
  },
  'guild set': {
    usage: 'guild set --id ID [--feature F ...] [--hub-type N] [--vanity CODE]',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: { id: { type: 'string' }, feature: { type: 'string', multiple: true }, 'hub-type': { type: 'string' }, vanity: { type: 'string' } },
      })
      if (!values.id) throw new UsageError('--id is required')
      const hubType = values['hub-type']
      if (hubType !== undefined && !/^\d+$/.test(hubType)) throw new UsageError('--hub-type must be a number')
      return setGuildAttributes(values.id, {
        features: values.feature,
        hubType: hubType === undefined ? undefined : Number(hubType),
        vanity: values.vanity,
      })
    },
  },
  'experiments load': {
    usage: 'experiments load FILE.json',
    async run(argv) {
      const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} })
      if (positionals.length !== 1) throw new UsageError('give one definitions file')
      const file = Bun.file(positionals[0])
      if (!(await file.exists())) throw new Error(`${positionals[0]}: no such file`)
      let parsed: unknown
      try {
        parsed = JSON.parse(await file.text())
      } catch (error) {
        throw new Error(`${positionals[0]}: not valid JSON (${(error as Error).message})`)
      }
      try {
        return loadDefinitions(parsed)
      } catch (error) {
        if (error instanceof DefinitionError) throw new Error(`${positionals[0]} refused, the loaded definitions stay:\n${error.message}`)
        throw error
      }
    },
  },
  'experiments list': {
    usage: 'experiments list',
    async run() {
      return listDefinitions()
    },
  },
  'experiments show': {
    usage: 'experiments show NAME',
    async run(argv) {
      const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} })
      if (positionals.length !== 1) throw new UsageError('give one experiment name')
      const definition = showDefinition(positionals[0])
      if (!definition) throw new Error(`no experiment named "${positionals[0]}"`)
      return JSON.stringify(definition, null, 2)
    },
  },
  'experiments eval': {
    usage: 'experiments eval NAME (--guild ID | --user ID)',
    async run(argv) {
      const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { guild: { type: 'string' }, user: { type: 'string' } } })
      if (positionals.length !== 1) throw new UsageError('give one experiment name')
      for (const id of [values.guild, values.user]) if (id !== undefined && !/^\d{1,20}$/.test(id)) throw new UsageError(`not an ID: ${id}`)
      try {
        return evaluateOne(positionals[0], { guild: values.guild, user: values.user })
      } catch (error) {
        if (error instanceof UnknownResource) throw new Error(error.message)
        throw error
      }
    },
  },
}

export class UsageError extends Error {}

/** Commands contributed by other domains (e.g. `server outbox`). */
export function addCommand(name: string, command: Command): void {
  commands[name] = command
}

export async function runCli(args: string[]): Promise<number> {
  const entry = Object.entries(commands).find(([name]) => name.split(' ').every((word, i) => args[i] === word))
  if (!entry) {
    console.error(`usage:\n${Object.values(commands).map((c) => `  ${c.usage}`).join('\n')}`)
    return 2
  }
  const [name, command] = entry
  try {
    openDatabase(config().databasePath, { syncFull: config().databaseSyncFull })
    const result = await command.run(args.slice(name.split(' ').length))
    console.log(typeof result === 'string' ? result : JSON.stringify(result))
    return 0
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
    return error instanceof UsageError ? 2 : 1
  } finally {
    closeDatabase()
  }
}
