// The binary's command line: `lobby-server` (or `lobby-server serve [--port N] [--host H]`) serves; `lobby-server --help` lists the
// operator commands (`lobby-server app create --name N`, `lobby-server user create --email E`, `lobby-server backup FILE`, ...).
// Commands print JSON (or text) on stdout so scripts can read it; log lines and errors go to stderr.
// Exit codes: 0 done, 1 refused or failed (one line on stderr), 2 bad usage (unknown command or option).
import type * as util from 'node:util'
import { config } from './config'
import { logToStderr } from './core/log'
import { closeDatabase, openDatabase } from './db/client'
import { postgresSide } from './db/postgres-side'
import { createApplication, ensureApplicationKeys } from './oauth2/applications'
import { setEventWebhooksUrl } from './oauth2/event-webhooks'
import { listApplications } from './oauth2/store'
import { createVerifiedUser } from './accounts/users'
import { findUserByEmail, listUsers } from './accounts/store'
import { isProvisional } from './accounts/provisional'
import { createSession } from './accounts/sessions'
import { passwordProblem } from './accounts/password-policy'
import { isUsernameTaken, suggestUsername, usernameProblem } from './usernames/rules'
import { setGuildAttributes } from './guilds/public'
import { readOutbox } from './delivery'
import { deleteUser, lockUser } from './auth/lock'
import { addProvider, ProviderRefused, providersOf, removeProvider } from './provisional/providers'
import { deleteApplicationAndData } from './provisional/app-delete'
import { audit, CLI, exportAudit } from './admin/audit'
import { grantOperator, NoSuchUser, operatorList, revokeOperator } from './admin/operators'
import { lockApplication } from './admin/applications'
import { transaction } from './db/client'
import { DefinitionError } from './experiments/definitions'
import { evaluateOne, listDefinitions, loadDefinitions, showDefinition, UnknownResource } from './experiments/service'
import { versionLine } from './version'
import { backup, restore } from './db/backup'
import { passwordFromStdin, readHidden } from './core/terminal'

/** node:util (~2 ms to load) only when a command parses its options, not on every start of the server. */
const parseArgs: typeof util.parseArgs = (options) => (require('node:util') as typeof util).parseArgs(options)

type Command = {
  usage: string
  summary: string
  /** 'none': the command opens (or avoids) the database itself, e.g. a backup must not migrate what it copies. */
  database?: 'none'
  run: (argv: string[]) => Promise<unknown>
}

/** The `--id` every command about one application or user takes. */
function requiredId(argv: string[]): string {
  const { values } = parseArgs({ args: argv, options: { id: { type: 'string' } } })
  if (!values.id) throw new UsageError('--id is required')
  return values.id
}

async function operatorCommand(
  argv: string[],
  change: typeof grantOperator,
): Promise<Awaited<ReturnType<typeof grantOperator>>> {
  const { values } = parseArgs({ args: argv, options: { user: { type: 'string' } } })
  if (!values.user) throw new UsageError('--user is required (an id, an e-mail or a username)')
  try {
    return await change(CLI, values.user)
  } catch (error) {
    if (error instanceof NoSuchUser) throw new Error(`--user: ${error.message}`)
    throw error
  }
}

const commands: Record<string, Command> = {
  'app create': {
    usage: 'app create --name NAME [--redirect-uri URI ...]',
    summary: 'an application and its bot user; prints {id, name, bot_token, client_secret} once',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: { name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true } },
      })
      if (!values.name) throw new UsageError('--name is required')
      for (const uri of values['redirect-uri'] ?? [])
        if (!URL.canParse(uri)) throw new UsageError(`--redirect-uri is not a URL: ${uri}`)
      const created = await createApplication(values.name, values['redirect-uri'] ?? [])
      await audit(CLI, { action: 'application.create', targetType: 'application', targetId: created.id })
      return created
    },
  },
  'app list': {
    usage: 'app list',
    summary: 'the applications, as JSON (id, name, bot_user_id, redirect_uris, verify_key, event_webhooks_url, locked)',
    async run() {
      const apps = await listApplications()
      const listed = []
      for (const a of apps)
        listed.push({
          id: a.id,
          name: a.name,
          bot_user_id: a.botUserId,
          redirect_uris: a.redirectUris,
          verify_key: (await ensureApplicationKeys(a)).verifyKey,
          event_webhooks_url: a.eventWebhooksUrl,
          locked: a.lockedAt != null,
        })
      return listed
    },
  },
  'app set': {
    usage: 'app set --id ID --event-webhook-url URL',
    summary:
      'the application\'s event webhooks URL: PINGed (signed with its key) and taken only when it answers 2xx; "" turns them off; prints {id, event_webhooks_url, event_webhooks_status}',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: { id: { type: 'string' }, 'event-webhook-url': { type: 'string' } },
      })
      if (!values.id) throw new UsageError('--id is required')
      const url = values['event-webhook-url']
      if (url === undefined) throw new UsageError('--event-webhook-url is required ("" turns event webhooks off)')
      try {
        await setEventWebhooksUrl(values.id, url === '' ? null : url)
      } catch (error) {
        const field = (error as { errors?: { event_webhooks_url?: { _errors?: { message: string }[] } } }).errors
        throw new Error(
          `--event-webhook-url refused: ${field?.event_webhooks_url?._errors?.[0]?.message ?? String(error)}`,
        )
      }
      await audit(CLI, {
        action: 'application.webhook_url',
        targetType: 'application',
        targetId: values.id,
        details: { event_webhooks_url: url === '' ? null : url },
      })
      const app = (await listApplications()).find((a) => a.id === values.id)!
      return { id: app.id, event_webhooks_url: app.eventWebhooksUrl, event_webhooks_status: app.eventWebhooksStatus }
    },
  },
  'app lock': {
    usage: 'app lock --id ID',
    summary:
      "lock an application: its Bot token and OAuth2 tokens (its provisional accounts' too) stop working, its bot's and players' sockets close on every node within a second; an audit row; prints {id, locked}",
    async run(argv) {
      return await lockApplication(CLI, requiredId(argv), true)
    },
  },
  'app unlock': {
    usage: 'app unlock --id ID',
    summary: 'unlock an application: its tokens that have not expired work again; an audit row; prints {id, locked}',
    async run(argv) {
      return await lockApplication(CLI, requiredId(argv), false)
    },
  },
  'app delete': {
    usage: 'app delete --id ID',
    summary:
      'delete an application and everything it owns, in one transaction: its lobbies (members, messages, pending event webhooks), its provisional accounts, its bot (out of its guilds), tokens, commands and identity providers; its sockets close; full accounts keep what is theirs (`app lock` is the reversible step); an audit row; prints {id, deleted, lobbies, provisional_accounts, guilds_left}',
    async run(argv) {
      const id = requiredId(argv)
      return await transaction(async () => {
        const deleted = await deleteApplicationAndData(id)
        if (!deleted) throw new Error(`no application with id ${id}`)
        const { id: _id, deleted: _deleted, ...details } = deleted
        await audit(CLI, { action: 'application.delete', targetType: 'application', targetId: id, details })
        return deleted
      })
    },
  },
  'app auth-provider add': {
    usage: 'app auth-provider add --id APP --type oidc --issuer URL --audience CLIENT_ID',
    summary:
      'an identity provider the application trusts for POST /partner-sdk/token (provisional accounts): an OIDC issuer and the audience its ID tokens carry; prints it',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: {
          id: { type: 'string' },
          type: { type: 'string' },
          issuer: { type: 'string' },
          audience: { type: 'string' },
        },
      })
      if (!values.id) throw new UsageError('--id is required')
      if (!values.type) throw new UsageError('--type is required (oidc)')
      if (!values.issuer) throw new UsageError('--issuer is required')
      if (!values.audience) throw new UsageError('--audience is required')
      return await operatorStep(() =>
        addProvider({
          applicationId: values.id!,
          type: values.type!,
          issuer: values.issuer!,
          audience: values.audience!,
        }),
      )
    },
  },
  'app auth-provider list': {
    usage: 'app auth-provider list [--id APP]',
    summary: 'the identity providers (of one application), as JSON: id, application_id, type, issuer, audience',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { id: { type: 'string' } } })
      return await providersOf(values.id)
    },
  },
  'app auth-provider remove': {
    usage: 'app auth-provider remove --provider ID',
    summary:
      'stop trusting an identity provider (its accounts stay; new exchanges of its tokens answer 530000 or 530002)',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { provider: { type: 'string' } } })
      if (!values.provider) throw new UsageError('--provider is required')
      return await operatorStep(() => removeProvider(values.provider!))
    },
  },
  'user create': {
    usage: 'user create --email EMAIL [--username NAME] [--password-stdin | --password PASSWORD]',
    summary:
      'a verified user, checked as registration checks it; asks for the password when neither option is given; prints {id, username, token}',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: {
          email: { type: 'string' },
          password: { type: 'string' },
          'password-stdin': { type: 'boolean' },
          username: { type: 'string' },
        },
      })
      if (!values.email) throw new UsageError('--email is required')
      if (values.password !== undefined && values['password-stdin'])
        throw new UsageError('give --password or --password-stdin, not both')
      // The same rules as POST /auth/register (auth/register.ts).
      const email = values.email.trim().toLowerCase()
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
        throw new Error(`--email: not a well formed e-mail address: ${values.email}`)
      if (await findUserByEmail(email)) throw new Error(`--email: ${email} is already registered`)
      let username: string
      if (values.username !== undefined) {
        username = values.username.toLowerCase()
        const problem = usernameProblem(username)
        if (problem) throw new Error(`--username: ${problem[1]}`)
        if (await isUsernameTaken(username)) throw new Error(`--username: ${username} is taken`)
      } else {
        username = await suggestUsername(email.split('@')[0])
      }
      const password =
        values.password ?? (values['password-stdin'] ? await passwordFromStdin() : await passwordFromPrompt())
      const problem = passwordProblem(password)
      if (problem) throw new Error(`password: ${problem[1]}`)
      const user = await createVerifiedUser({ email, password, username })
      const { token } = await createSession(user.id, { platform: 'cli' })
      return { id: user.id, username: user.username, token }
    },
  },
  'user list': {
    usage: 'user list [--limit N] [--after ID] [--provisional]',
    summary:
      'people (not bots) in ID order, as JSON: id, username, email, verified, state, locked, created_at, provisional (--provisional: only the provisional accounts)',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: { limit: { type: 'string' }, after: { type: 'string' }, provisional: { type: 'boolean' } },
      })
      const limit = values.limit === undefined ? 1000 : Number(values.limit)
      if (!Number.isInteger(limit) || limit < 1 || limit > 100_000)
        throw new UsageError('--limit must be an integer from 1 to 100000')
      if (values.after !== undefined && !/^\d{1,20}$/.test(values.after))
        throw new UsageError(`--after: not an ID: ${values.after}`)
      const rows = await listUsers({ limit, after: values.after, provisional: values.provisional })
      return rows.map((u) => ({
        id: u.id,
        username: u.username,
        email: u.email,
        verified: u.emailVerified,
        state: u.state,
        locked: u.compromised,
        created_at: new Date(u.createdAt).toISOString(),
        provisional: isProvisional(u),
      }))
    },
  },
  'user lock': {
    usage: 'user lock --id ID',
    summary: 'flag an account as compromised: its sessions end, its next login needs a password reset',
    async run(argv) {
      const id = requiredId(argv)
      // The console's lock takes the same path (admin/users.ts); both are audit rows.
      return await transaction(async () => {
        const result = await lockUser(id)
        await audit(CLI, {
          action: 'user.lock',
          targetType: 'user',
          targetId: id,
          details: { sessions_ended: result.sessions_ended },
        })
        return result
      })
    },
  },
  'operator grant': {
    usage: 'operator grant --user ID|EMAIL|USERNAME',
    summary: 'give an account the operator role (the console at /console; it also needs MFA on); an audit row',
    async run(argv) {
      return await operatorCommand(argv, grantOperator)
    },
  },
  'operator revoke': {
    usage: 'operator revoke --user ID|EMAIL|USERNAME',
    summary: 'take the operator role away; an audit row',
    async run(argv) {
      return await operatorCommand(argv, revokeOperator)
    },
  },
  'operator list': {
    usage: 'operator list',
    summary: 'the operators, as JSON: id, username, granted_at',
    async run() {
      return await operatorList()
    },
  },
  'audit export': {
    usage: 'audit export [--action ACTION] [--target ID] [--actor ID]',
    summary: 'the audit log of operator actions (console and CLI), oldest first, one JSON object a line',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: { action: { type: 'string' }, target: { type: 'string' }, actor: { type: 'string' } },
      })
      return await exportAudit({ action: values.action, targetId: values.target, actorId: values.actor })
    },
  },
  'user delete': {
    usage: 'user delete --id ID',
    summary:
      'delete an account (a provisional one too): its sessions, OAuth2 tokens and sockets end at once; prints {id, deleted, sessions_ended, tokens_ended}',
    async run(argv) {
      return await deleteUser(requiredId(argv))
    },
  },
  outbox: {
    usage: 'outbox [--to ADDRESS] [--json]',
    summary: 'e-mails and texts kept while no SMTP server or SMS webhook is set',
    async run(argv) {
      const { values } = parseArgs({ args: argv, options: { to: { type: 'string' }, json: { type: 'boolean' } } })
      const rows = await readOutbox(values.to)
      if (values.json)
        return rows.map((r) => ({
          id: r.id,
          channel: r.channel,
          to: r.to,
          subject: r.subject,
          body: r.body,
          status: r.status,
          created_at: new Date(r.createdAt).toISOString(),
        }))
      return rows
        .map(
          (r) =>
            `${new Date(r.createdAt).toISOString()} ${r.channel} to ${r.to} [${r.status}]${r.subject ? ` ${r.subject}` : ''}\n${r.body}\n`,
        )
        .join('\n')
    },
  },
  'guild set': {
    usage: 'guild set --id ID [--feature F ...] [--hub-type N] [--vanity CODE]',
    summary: 'operator-set server features, hub type and vanity code',
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: {
          id: { type: 'string' },
          feature: { type: 'string', multiple: true },
          'hub-type': { type: 'string' },
          vanity: { type: 'string' },
        },
      })
      if (!values.id) throw new UsageError('--id is required')
      const hubType = values['hub-type']
      if (hubType !== undefined && !/^\d+$/.test(hubType)) throw new UsageError('--hub-type must be a number')
      return await setGuildAttributes(values.id, {
        features: values.feature,
        hubType: hubType === undefined ? undefined : Number(hubType),
        vanity: values.vanity,
      })
    },
  },
  'experiments load': {
    usage: 'experiments load FILE.json',
    summary: "replace every experiment definition with the file's (checked whole; a bad file changes nothing)",
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
        const loaded = await loadDefinitions(parsed)
        await audit(CLI, { action: 'experiments.load', targetType: 'experiments', details: { file: positionals[0] } })
        return loaded
      } catch (error) {
        if (error instanceof DefinitionError)
          throw new Error(`${positionals[0]} refused, the loaded definitions stay:\n${error.message}`)
        throw error
      }
    },
  },
  'experiments list': {
    usage: 'experiments list',
    summary: 'the loaded experiments, as JSON',
    async run() {
      return await listDefinitions()
    },
  },
  'experiments show': {
    usage: 'experiments show NAME',
    summary: 'one definition as loaded',
    async run(argv) {
      const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} })
      if (positionals.length !== 1) throw new UsageError('give one experiment name')
      const definition = await showDefinition(positionals[0])
      if (!definition) throw new Error(`no experiment named "${positionals[0]}"`)
      return JSON.stringify(definition, null, 2)
    },
  },
  'experiments eval': {
    usage: 'experiments eval NAME (--guild ID | --user ID)',
    summary: 'bucket, population and rollout position of a server or user',
    async run(argv) {
      const { positionals, values } = parseArgs({
        args: argv,
        allowPositionals: true,
        options: { guild: { type: 'string' }, user: { type: 'string' } },
      })
      if (positionals.length !== 1) throw new UsageError('give one experiment name')
      for (const id of [values.guild, values.user])
        if (id !== undefined && !/^\d{1,20}$/.test(id)) throw new UsageError(`not an ID: ${id}`)
      try {
        return await evaluateOne(positionals[0], { guild: values.guild, user: values.user })
      } catch (error) {
        if (error instanceof UnknownResource) throw new Error(error.message)
        throw error
      }
    },
  },
  backup: {
    usage: 'backup FILE',
    summary:
      'a consistent copy of the database while the server runs (VACUUM INTO), integrity-checked; FILE must not exist',
    database: 'none',
    async run(argv) {
      const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} })
      if (positionals.length !== 1) throw new UsageError('give one backup file')
      if (config().databaseUrl) throw new Error('DATABASE_URL names a PostgreSQL server: back it up with pg_dump')
      return backup(config().databasePath, positionals[0])
    },
  },
  restore: {
    usage: 'restore FILE',
    summary: 'replace the database with a backup (the server must be stopped; the current file is kept aside)',
    database: 'none',
    async run(argv) {
      const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} })
      if (positionals.length !== 1) throw new UsageError('give one backup file')
      if (config().databaseUrl) throw new Error('DATABASE_URL names a PostgreSQL server: restore it with pg_restore')
      return restore(config().databasePath, positionals[0])
    },
  },
}

const SERVE = {
  usage: 'serve [--port N] [--host ADDRESS]',
  summary: 'run the server (the default with no command); the options override PORT and HOST',
}

export class UsageError extends Error {}

/** Commands contributed by other domains (e.g. `lobby-server outbox`). */
export function addCommand(name: string, command: Command): void {
  commands[name] = command
}

function helpText(): string {
  const rows = [
    SERVE,
    ...Object.values(commands),
    { usage: 'help, --help', summary: "this list (COMMAND --help: one command's usage)" },
    { usage: '--version', summary: 'the version, commit, build date and target' },
  ]
  return [
    versionLine(),
    '',
    'usage: lobby-server [COMMAND] [OPTIONS]',
    '',
    'commands:',
    ...rows.flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    '',
    'Settings come from the environment (DATABASE_PATH, PORT, HOST, ...): see the README.',
    'Exit status: 0 done, 1 refused or failed, 2 bad usage.',
  ].join('\n')
}

/** A domain's refusal of an operator's input: one line, exit 1. */
async function operatorStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    if (error instanceof ProviderRefused) throw new Error(error.message)
    throw error
  }
}

function findCommand(args: string[]): [name: string, command: Command] | undefined {
  return Object.entries(commands).find(([name]) => name.split(' ').every((word, i) => args[i] === word))
}

export type Invocation =
  | { kind: 'serve'; port?: number; host?: string }
  | { kind: 'exit'; code: number }
  | { kind: 'command'; args: string[] }

/** What the command line asks for; help, version and usage errors are printed here. */
export function parseInvocation(args: string[]): Invocation {
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    console.log(helpText())
    return { kind: 'exit', code: 0 }
  }
  if (args[0] === '--version' || args[0] === 'version' || args[0] === '-v') {
    console.log(versionLine())
    return { kind: 'exit', code: 0 }
  }
  if (args.length === 0 || args[0] === 'serve') {
    if (args.includes('--help') || args.includes('-h')) {
      console.log(`usage: lobby-server ${SERVE.usage}\n${SERVE.summary}`)
      return { kind: 'exit', code: 0 }
    }
    try {
      const { values } = parseArgs({
        args: args.slice(1),
        options: { port: { type: 'string' }, host: { type: 'string' } },
      })
      let port: number | undefined
      if (values.port !== undefined) {
        if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535)
          throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`)
        port = Number(values.port)
      }
      if (values.host !== undefined && !values.host) throw new UsageError('--host must not be empty')
      return { kind: 'serve', port, host: values.host }
    } catch (error) {
      console.error(`error: ${(error as Error).message}\nusage: lobby-server ${SERVE.usage}`)
      return { kind: 'exit', code: 2 }
    }
  }
  const found = findCommand(args)
  if (!found) {
    const words = args
      .filter((a) => !a.startsWith('-'))
      .slice(0, 2)
      .join(' ')
    console.error(`error: unknown command "${words || args[0]}"; "lobby-server --help" lists the commands`)
    return { kind: 'exit', code: 2 }
  }
  const command = found[1]
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: lobby-server ${command.usage}\n${command.summary}`)
    return { kind: 'exit', code: 0 }
  }
  return { kind: 'command', args }
}

/** Run one operator command (`args` as parseInvocation returned them); returns the exit code. */
export async function runCli(args: string[]): Promise<number> {
  logToStderr()
  const found = findCommand(args)
  if (!found) {
    console.error(`error: unknown command "${args.slice(0, 2).join(' ')}"; "lobby-server --help" lists the commands`)
    return 2
  }
  const [name, command] = found
  try {
    const pg = command.database !== 'none' && config().databaseUrl ? await postgresSide() : undefined
    if (pg) await pg.openPostgres(config().databaseUrl!, { listen: false })
    else if (command.database !== 'none') openDatabase(config().databasePath, { syncFull: config().databaseSyncFull })
    const result = await command.run(args.slice(name.split(' ').length))
    // Running servers empty their caches (SQLite's data_version tells them without it).
    await pg?.announceChanges()
    console.log(typeof result === 'string' ? result : JSON.stringify(result))
    return 0
  } catch (error) {
    const usage = error instanceof UsageError || String((error as { code?: string })?.code).startsWith('ERR_PARSE_ARGS')
    console.error(
      `error: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}${usage ? `\nusage: lobby-server ${command.usage}` : ''}`,
    )
    if (!usage && error instanceof Error && error.message.includes('\n'))
      console.error(error.message.split('\n').slice(1).join('\n'))
    return usage ? 2 : 1
  } finally {
    await closeDatabase()
  }
}

async function passwordFromPrompt(): Promise<string> {
  if (!process.stdin.isTTY)
    throw new UsageError('no password: give --password-stdin (or --password), or run in a terminal to be asked')
  const first = await readHidden('Password: ')
  const problem = passwordProblem(first)
  if (problem) throw new Error(`password: ${problem[1]}`)
  if ((await readHidden('Repeat password: ')) !== first) throw new Error('the passwords differ')
  return first
}
