// `hangar schedules create|list|update|runs|delete`: agent runs on a cron schedule, from the terminal.
import { Option, type Command } from 'commander';
import { clientOptions, describeError } from './target.js';
import { createHangarClient, type HangarClient } from '../client/index.js';
import type { components } from '../client/schema.js';
import { nextTicks, parseSchedule } from '../core/schedules/cron.js';
import { agentIdByName } from './chat.js';
import { table } from './table.js';

type Schedule = components['schemas']['Schedule'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where the commands write. */
export interface Output {
  out: (text: string) => void;
}

type Target = (flags: { url?: string; apiKey?: string }) => { baseUrl: string; apiKey: string; fetch?: typeof fetch };


async function agentId(client: HangarClient, agent: string): Promise<string> {
  return UUID.test(agent) ? agent : agentIdByName(client, agent);
}

/**
 * The name of each agent, as people created it (the AGENT column shows names, as the Console does);
 * a deleted agent is shown as such, with its id. Read once per distinct agent.
 */
async function agentNames(client: HangarClient, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  const found = await Promise.all(
    unique.map(async (id) => {
      const res = await client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: id } } });
      if (res.data) return [id, res.data.name] as const;
      return [id, res.response.status === 404 ? `(deleted agent ${id})` : id] as const;
    }),
  );
  return new Map(found);
}

/** Add the `schedules` commands to the program. */
export function registerScheduleCommands(program: Command, target: Target, io: Output = { out: (t) => process.stdout.write(t) }): void {
  const schedules = program.command('schedules').description('Agent runs on a cron schedule (5 fields, or 6 with seconds first).');

  clientOptions(schedules.command('create <agent> <schedule>'))
    .description('Run AGENT (id or exact name) at every tick of SCHEDULE, e.g. "0 9 * * 1-5" or "*/10 * * * * *"; prints the next run times.')
    .requiredOption('--message <text>', 'the message each run is sent')
    .option('--timezone <zone>', 'IANA time zone of the schedule (default: this machine’s)')
    .option('--thread <id>', 'run every time on this thread (default: a new thread per run)')
    .addOption(new Option('--multitask-strategy <strategy>', 'when a tick finds its thread busy (default: reject, the tick is skipped)').choices(['reject', 'enqueue', 'interrupt', 'rollback']))
    .option('--end-time <time>', 'no tick fires after this instant (ISO 8601 with an offset, e.g. 2026-12-31T18:00:00Z)')
    .option('--webhook <url>', 'POST a signed summary of each run to this URL when it ends')
    .option('--disabled', 'create it without firing')
    .action(
      async (
        agent: string,
        schedule: string,
        flags: { message: string; timezone?: string; thread?: string; multitaskStrategy?: 'reject' | 'enqueue' | 'interrupt' | 'rollback'; endTime?: string; webhook?: string; disabled?: boolean; url?: string; apiKey?: string },
      ) => {
      const client = createHangarClient(target(flags));
      const timezone = flags.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
      const res = await client.POST('/v1/deepagents/schedules', {
        body: {
          agent_id: await agentId(client, agent),
          schedule,
          timezone,
          input: { messages: [{ role: 'user', content: flags.message }] },
          ...(flags.thread ? { thread: flags.thread } : {}),
          ...(flags.multitaskStrategy ? { multitask_strategy: flags.multitaskStrategy } : {}),
          ...(flags.endTime ? { end_time: flags.endTime } : {}),
          ...(flags.webhook ? { webhook: flags.webhook } : {}),
          ...(flags.disabled ? { enabled: false } : {}),
        },
      });
      if (!res.data) throw new Error(`the schedule was refused (${res.response.status}): ${describeError(res.error)}`);
      const s = res.data;
      io.out(`Created schedule ${s.id}: "${s.schedule}" in ${s.timezone}${s.enabled ? '' : ' (disabled)'}\n`);
      if (s.next_run_at) {
        const parsed = parseSchedule(s.schedule, s.timezone);
        const upcoming = parsed.ok ? [new Date(s.next_run_at), ...nextTicks(parsed.cron, new Date(s.next_run_at), s.end_time ? new Date(s.end_time) : null, 4)] : [new Date(s.next_run_at)];
        io.out(`Next runs:\n${upcoming.map((d) => `  ${d.toISOString()}  (${d.toLocaleString('en-GB', { timeZone: s.timezone })} ${s.timezone})`).join('\n')}\n`);
      }
      },
    );

  clientOptions(schedules.command('list'))
    .description('List the schedules of the workspace.')
    .option('--agent <agent>', 'only this agent (id or exact name)')
    .option('--json', 'print the JSON items')
    .action(async (flags: { agent?: string; json?: boolean; url?: string; apiKey?: string }) => {
      const client = createHangarClient(target(flags));
      const filter = flags.agent ? { agent_id: await agentId(client, flags.agent) } : {};
      // Every page: the server gives at most 100 at a time.
      const items: Schedule[] = [];
      for (let cursor: string | undefined; ; ) {
        const res = await client.GET('/v1/deepagents/schedules', { params: { query: { page_size: 100, ...filter, ...(cursor ? { cursor } : {}) } } });
        if (!res.data) throw new Error(`could not list schedules: ${describeError(res.error)}`);
        items.push(...res.data.items);
        if (!res.data.next_cursor) break;
        cursor = res.data.next_cursor;
      }
      if (flags.json) return void io.out(`${JSON.stringify(items, null, 2)}\n`);
      const names = await agentNames(client, items.map((s) => s.agent_id));
      io.out(
        table(
          ['ID', 'AGENT', 'SCHEDULE', 'TIMEZONE', 'ENABLED', 'NEXT RUN', 'LAST RUN'],
          items.map((s) => [
            s.id,
            names.get(s.agent_id) ?? s.agent_id,
            s.schedule,
            s.timezone,
            s.enabled ? 'yes' : 'no',
            s.next_run_at ?? '',
            s.last_run ? `${s.last_run.tick_at} ${s.last_run.run?.status ?? s.last_run.state}` : '',
          ]),
        ),
      );
    });

  clientOptions(schedules.command('update <id>'))
    .description('Change a schedule: only the fields given. It reads the schedule first and sends If-Match with its updated_at, so a change made by someone else in between is never overwritten (the update is refused and nothing is written).')
    .option('--schedule <expression>', 'the new cron expression')
    .option('--timezone <zone>', 'IANA time zone of the schedule')
    .option('--message <text>', 'the message each run is sent')
    .option('--thread <id>', 'run every time on this thread, or "new" for a new thread per run')
    .addOption(new Option('--multitask-strategy <strategy>', 'when a tick finds its thread busy').choices(['reject', 'enqueue', 'interrupt', 'rollback']))
    .option('--end-time <time>', 'no tick fires after this instant (ISO 8601 with an offset, e.g. 2026-12-31T18:00:00Z)')
    .option('--no-end-time', 'remove the end time')
    .option('--webhook <url>', 'POST a signed summary of each run to this URL when it ends')
    .option('--no-webhook', 'remove the webhook')
    .addOption(new Option('--enabled', 'fire again, from the next tick on').conflicts('disabled'))
    .option('--disabled', 'stop firing (pause) until enabled again')
    .action(
      async (
        id: string,
        flags: { schedule?: string; timezone?: string; message?: string; thread?: string; multitaskStrategy?: 'reject' | 'enqueue' | 'interrupt' | 'rollback'; endTime?: string | false; webhook?: string | false; enabled?: boolean; disabled?: boolean; url?: string; apiKey?: string },
      ) => {
        // `--x VALUE` and `--no-x` together leave the flag undefined unless given: only what is given is changed.
        const body = {
          ...(flags.schedule !== undefined ? { schedule: flags.schedule } : {}),
          ...(flags.timezone !== undefined ? { timezone: flags.timezone } : {}),
          ...(flags.message !== undefined ? { input: { messages: [{ role: 'user' as const, content: flags.message }] } } : {}),
          ...(flags.thread !== undefined ? { thread: flags.thread } : {}),
          ...(flags.multitaskStrategy !== undefined ? { multitask_strategy: flags.multitaskStrategy } : {}),
          ...(typeof flags.endTime === 'string' ? { end_time: flags.endTime } : flags.endTime === false ? { end_time: null } : {}),
          ...(typeof flags.webhook === 'string' ? { webhook: flags.webhook } : flags.webhook === false ? { webhook: null } : {}),
          ...(flags.enabled ? { enabled: true } : flags.disabled ? { enabled: false } : {}),
        };
        if (Object.keys(body).length === 0) {
          throw new Error('nothing to change: give at least one of --schedule, --timezone, --message, --thread, --multitask-strategy, --end-time, --no-end-time, --webhook, --no-webhook, --enabled, --disabled');
        }
        const client = createHangarClient(target(flags));
        const read = await client.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: id } } });
        if (!read.data) throw new Error(`could not read schedule ${id}: ${describeError(read.error)}`);
        const res = await client.PATCH('/v1/deepagents/schedules/{schedule_id}', {
          params: { path: { schedule_id: id }, header: { 'if-match': `"${read.data.updated_at}"` } },
          body,
        });
        if (res.response.status === 412) {
          throw new Error(`schedule ${id} was changed by someone else since it was read (at ${read.data.updated_at}); nothing was written. Look at it again (hangar schedules list) and retry.`);
        }
        if (!res.data) throw new Error(`the change was refused (${res.response.status}): ${describeError(res.error)}`);
        const s = res.data;
        io.out(`Updated schedule ${s.id}: "${s.schedule}" in ${s.timezone}${s.enabled ? '' : ' (disabled)'}\n`);
        io.out(s.next_run_at ? `Next run: ${s.next_run_at}\n` : 'No next run.\n');
      },
    );

  clientOptions(schedules.command('runs <id>'))
    .description('The latest 100 ticks of a schedule and the runs they started, newest first.')
    .action(async (id: string, flags: { url?: string; apiKey?: string }) => {
      const client = createHangarClient(target(flags));
      const res = await client.GET('/v1/deepagents/schedules/{schedule_id}/runs', { params: { path: { schedule_id: id }, query: { page_size: 100 } } });
      if (!res.data) throw new Error(`could not read schedule ${id}: ${describeError(res.error)}`);
      io.out(
        table(
          ['TICK', 'STATE', 'RUN', 'THREAD', 'STATUS'],
          res.data.items.map((t) => [t.tick_at, t.catch_up ? `${t.state} (catch-up)` : t.state, t.run_id ?? '', t.thread_id ?? '', t.run?.status ?? t.error?.error ?? '']),
        ),
      );
    });

  clientOptions(schedules.command('delete <id>'))
    .description('Delete a schedule (its threads and runs stay).')
    .action(async (id: string, flags: { url?: string; apiKey?: string }) => {
      const client = createHangarClient(target(flags));
      const res = await client.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: id } } });
      if (res.response.status !== 204) throw new Error(`could not delete schedule ${id}: ${describeError(res.error)}`);
      io.out(`Deleted schedule ${id}\n`);
    });
}
