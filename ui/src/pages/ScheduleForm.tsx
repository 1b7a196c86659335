// The Schedules page's forms: a new schedule (agent, cron expression, time zone, message and, under
// "More options", whether it runs, one thread, an end and a webhook), and a schedule's changes. The
// server's reasons for a refusal go under the inputs they are about, in its words.
import { Alert, Autocomplete, Button, Radio, Select, Stack, Switch, Text, Textarea, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiError, ok, type Schemas } from '../api';
import { agentsQuery } from '../queries';
import { ServerError } from '../ServerError';

const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const ZONES = [...new Set(['UTC', BROWSER_ZONE, ...Intl.supportedValuesOf('timeZone')])];

type Field = 'agent' | 'schedule' | 'timezone' | 'message' | OptionField;

/** Which input of the form a field the server named belongs to. */
function inputOf(field: string): Field | null {
  if (field === 'agent_id') return 'agent';
  if (field === 'schedule' || field === 'timezone') return field;
  if (field.startsWith('input') || field.startsWith('messages')) return 'message';
  return (['enabled', 'thread', 'multitask_strategy', 'end_time', 'webhook'] as const).find((f) => f === field) ?? null;
}

/** The server's reasons by the input they are about (several on one input joined). */
function placedErrors(error: unknown): Partial<Record<Field, string>> {
  const found: Partial<Record<Field, string>> = {};
  if (error instanceof ApiError) for (const f of error.fields) {
    const input = inputOf(f.field);
    if (input) found[input] = found[input] ? `${found[input]}; ${f.message}` : f.message;
  }
  return found;
}

/** The expression, its zone and the message: the inputs both forms have. */
function WhenFields(props: {
  cron: string;
  setCron: (v: string) => void;
  zone: string;
  setZone: (v: string) => void;
  message: string;
  setMessage: (v: string) => void;
  messageDescription: string;
  /** The message input's label when it is one of several (default "Message"). */
  messageLabel?: string;
  /** Inputs shown before the message's (a schedule's earlier messages). */
  before?: ReactNode;
  errors: Partial<Record<Field, string>>;
  edited: (field: 'schedule' | 'timezone' | 'message') => void;
  autofocus: boolean;
}) {
  const { errors, edited } = props;
  return (
    <>
      <TextInput
        label="Cron expression"
        description="5 fields: minute hour day-of-month month day-of-week (0 9 * * 1-5: 09:00 on weekdays), or 6 with seconds first"
        placeholder="0 9 * * 1-5"
        value={props.cron}
        onChange={(e) => {
          props.setCron(e.currentTarget.value);
          edited('schedule');
        }}
        required
        error={errors.schedule}
        classNames={{ input: 'mono' }}
        data-autofocus={props.autofocus ? true : undefined}
      />
      <Autocomplete
        label="Time zone"
        description="The expression is read in this IANA zone; daylight-saving changes follow it"
        data={ZONES}
        limit={30}
        value={props.zone}
        onChange={(v) => {
          props.setZone(v);
          edited('timezone');
        }}
        required
        error={errors.timezone}
      />
      {props.before}
      <Textarea
        label={props.messageLabel ?? 'Message'}
        description={props.messageDescription}
        autosize
        minRows={3}
        value={props.message}
        onChange={(e) => {
          props.setMessage(e.currentTarget.value);
          edited('message');
        }}
        required
        error={errors.message}
      />
    </>
  );
}

export function CreateSchedule({ agentId, agentName, onDone }: { agentId: string | null; agentName: string | null; onDone: () => void }) {
  const client = useQueryClient();
  const [agent, setAgent] = useState<{ value: string; label: string } | null>(agentId && agentName ? { value: agentId, label: agentName } : null);
  const [search, setSearch] = useState(agent?.label ?? '');
  const [name] = useDebouncedValue(search === agent?.label ? '' : search, 250);
  // The agents whose name contains what is typed (a workspace may have more than a page of them).
  const agents = useQuery(agentsQuery(name));
  const options = useMemo(() => {
    const found = (agents.data?.items ?? []).map((a) => ({ value: a.id, label: a.name }));
    return agent && !found.some((o) => o.value === agent.value) ? [agent, ...found] : found;
  }, [agents.data, agent]);
  const [cron, setCron] = useState('');
  const [zone, setZone] = useState(BROWSER_ZONE);
  const [message, setMessage] = useState('');
  // The options (paused, one thread, busy-thread strategy, end, webhook) behind "More options".
  const [opts, setOpts] = useState(DEFAULT_OPTIONS);
  const [more, setMore] = useState(false);
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const create = useMutation({
    mutationFn: async () =>
      ok(
        await api.POST('/v1/deepagents/schedules', {
          body: {
            agent_id: agent!.value,
            schedule: cron.trim(),
            timezone: zone.trim(),
            input: { messages: [{ role: 'user', content: message }] },
            ...(opts.enabled ? {} : { enabled: false }),
            ...(opts.threadMode === 'one' ? { thread: opts.threadId.trim(), multitask_strategy: opts.strategy } : {}),
            ...(opts.endTime ? { end_time: new Date(opts.endTime).toISOString() } : {}),
            ...(opts.webhook.trim() ? { webhook: opts.webhook.trim() } : {}),
          },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['schedules'] });
      setCron('');
      setMessage('');
      setOpts(DEFAULT_OPTIONS);
      onDone();
    },
    // The server's reasons go beside the inputs they are about; any other stays in the alert below.
    onError: (error) => {
      const found = placedErrors(error);
      setErrors(found);
      if (OPTION_FIELDS.some((f) => found[f])) setMore(true);
    },
  });
  const unplaced = create.error && !(create.error instanceof ApiError && create.error.fields.length > 0 && create.error.fields.every((f) => inputOf(f.field)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // Checked here: Select's `required` does not stop a submit.
    const found: typeof errors = {};
    if (!agent) found.agent = 'Choose an agent';
    if (!cron.trim()) found.schedule = 'Write a cron expression, e.g. 0 9 * * 1-5';
    if (!message.trim()) found.message = 'Write the message each run is sent';
    Object.assign(found, checkedOptions(opts));
    setErrors(found);
    create.reset();
    if (Object.keys(found).length === 0) create.mutate();
    else if (OPTION_FIELDS.some((f) => found[f])) setMore(true);
  };
  const edited = (field: Field) => setErrors((x) => ({ ...x, [field]: undefined }));
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <Select
          label="Agent"
          placeholder="Search agents…"
          data={options}
          value={agent?.value ?? null}
          onChange={(value, option) => {
            setAgent(value ? { value, label: option.label } : null);
            edited('agent');
          }}
          searchable
          searchValue={search}
          onSearchChange={setSearch}
          nothingFoundMessage={agents.isFetching ? 'Searching…' : 'No agent matches'}
          required
          error={errors.agent}
          data-autofocus={agent ? undefined : true}
        />
        <WhenFields
          cron={cron}
          setCron={setCron}
          zone={zone}
          setZone={setZone}
          message={message}
          setMessage={setMessage}
          messageDescription="What each run is sent"
          errors={errors}
          edited={edited}
          autofocus={agent !== null}
        />
        <Button variant="subtle" size="compact-sm" onClick={() => setMore((m) => !m)} aria-expanded={more} className="wrapping-button" style={{ alignSelf: 'flex-start' }}>
          {more ? 'Fewer options' : 'More options: paused, one thread, end, webhook'}
        </Button>
        {more && <OptionFields options={opts} set={(patch) => setOpts((o) => ({ ...o, ...patch }))} errors={errors} edited={edited} />}
        {create.error && unplaced && <ServerError error={create.error} />}
        <Button type="submit" loading={create.isPending}>
          Create schedule
        </Button>
      </Stack>
    </form>
  );
}

type Schedule = Schemas['Schedule'];
type Strategy = Schedule['multitask_strategy'];
/** The inputs of the edit form: those of the create form but the agent (a schedule keeps its agent). */
type EditField = Exclude<Field, 'agent'>;

const STRATEGIES: { value: Strategy; label: string }[] = [
  { value: 'reject', label: 'Skip that tick (recorded as skipped)' },
  { value: 'enqueue', label: 'Queue the run after the busy one (at most 3 waiting)' },
  { value: 'interrupt', label: 'Interrupt the busy run, keep its progress, start this one' },
  { value: 'rollback', label: 'Cancel the busy run, drop its progress, start this one' },
];

/** An instant as a `datetime-local` value in the browser's zone (to the minute). */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

type OptionField = 'enabled' | 'thread' | 'multitask_strategy' | 'end_time' | 'webhook';
const OPTION_FIELDS: OptionField[] = ['enabled', 'thread', 'multitask_strategy', 'end_time', 'webhook'];

/** A schedule's options beyond its expression and message, as the form holds them. */
interface Options {
  enabled: boolean;
  threadMode: 'new' | 'one';
  threadId: string;
  strategy: Strategy;
  /** A `datetime-local` value in the browser's zone, or empty for no end. */
  endTime: string;
  /** Empty for none. */
  webhook: string;
}

const DEFAULT_OPTIONS: Options = { enabled: true, threadMode: 'new', threadId: '', strategy: 'reject', endTime: '', webhook: '' };

function optionsOf(s: Schedule): Options {
  return {
    enabled: s.enabled,
    threadMode: s.thread === 'new' ? 'new' : 'one',
    threadId: s.thread === 'new' ? '' : s.thread,
    strategy: s.multitask_strategy,
    endTime: localInput(s.end_time),
    webhook: s.webhook ?? '',
  };
}

/** What is wrong with the options before anything is sent. */
function checkedOptions(o: Options): Partial<Record<OptionField, string>> {
  const found: Partial<Record<OptionField, string>> = {};
  if (o.threadMode === 'one' && !o.threadId.trim()) found.thread = 'Write the id of the thread every run goes to';
  if (o.endTime && Number.isNaN(new Date(o.endTime).getTime())) found.end_time = 'Write a date and time, or leave it empty for no end';
  return found;
}

/** Whether it runs, on which thread, what a tick does when that thread is busy, its end and its webhook. */
function OptionFields({ options, set, errors, edited }: { options: Options; set: (patch: Partial<Options>) => void; errors: Partial<Record<OptionField, string>>; edited: (field: OptionField) => void }) {
  const { enabled, threadMode, threadId, strategy, endTime, webhook } = options;
  return (
    <>
      <Switch
        label="Runs on schedule"
        description={enabled ? 'On: it fires at every tick' : 'Off: paused, it fires nothing until switched on again (no catch-up for the paused span)'}
        checked={enabled}
        onChange={(e) => {
          set({ enabled: e.currentTarget.checked });
          edited('enabled');
        }}
        error={errors.enabled}
      />
      <Radio.Group
        label="Thread of each run"
        value={threadMode}
        onChange={(v) => {
          set({ threadMode: v as 'new' | 'one' });
          edited('thread');
        }}
        error={threadMode === 'new' ? errors.thread : undefined}
      >
        <Stack gap={6} mt={4}>
          <Radio value="new" label="A new thread for every run" />
          <Radio value="one" label="Always the same thread (it must be this agent’s, or have none yet)" />
        </Stack>
      </Radio.Group>
      {threadMode === 'one' && (
        <TextInput
          label="Thread id"
          placeholder="00000000-0000-0000-0000-000000000000"
          value={threadId}
          onChange={(e) => {
            set({ threadId: e.currentTarget.value });
            edited('thread');
          }}
          required
          error={errors.thread}
          classNames={{ input: 'mono' }}
        />
      )}
      {/* A new thread is never busy: what a busy thread does matters only with one thread. */}
      {threadMode === 'one' && (
        <Select
          label="When the thread is still busy at a tick"
          data={STRATEGIES}
          value={strategy}
          onChange={(v) => {
            if (v) set({ strategy: v as Strategy });
            edited('multitask_strategy');
          }}
          allowDeselect={false}
          error={errors.multitask_strategy}
        />
      )}
      <TextInput
        type="datetime-local"
        label="End"
        description={`No tick fires after it, in your time (${BROWSER_ZONE}); empty: it never ends`}
        value={endTime}
        onChange={(e) => {
          set({ endTime: e.currentTarget.value });
          edited('end_time');
        }}
        error={errors.end_time}
      />
      <TextInput
        type="url"
        label="Webhook URL"
        description="Receives a signed POST when each run ends; empty: none"
        placeholder="https://example.com/hooks/hangar"
        value={webhook}
        onChange={(e) => {
          set({ webhook: e.currentTarget.value });
          edited('webhook');
        }}
        error={errors.webhook}
      />
    </>
  );
}

type ScheduleMessage = Schedule['input']['messages'][number];

/** The edit form's values: those of the create form but the agent, and every message of the schedule. */
export interface EditValues extends Options {
  cron: string;
  zone: string;
  messages: ScheduleMessage[];
}

function valuesOf(s: Schedule): EditValues {
  return { cron: s.schedule, zone: s.timezone, messages: s.input.messages, ...optionsOf(s) };
}

/** The form's values as the API's fields, to compare two versions field by field. */
function apiValues(v: EditValues) {
  return {
    schedule: v.cron.trim(),
    timezone: v.zone.trim(),
    input: v.messages,
    enabled: v.enabled,
    thread: v.threadMode === 'new' ? 'new' : v.threadId.trim(),
    multitask_strategy: v.strategy,
    end_time: v.endTime,
    webhook: v.webhook.trim(),
  };
}
type ApiField = keyof ReturnType<typeof apiValues>;
/** The form's values each API field is made of. */
const FORM_VALUES: Record<ApiField, (keyof EditValues)[]> = {
  schedule: ['cron'],
  timezone: ['zone'],
  input: ['messages'],
  enabled: ['enabled'],
  thread: ['threadMode', 'threadId'],
  multitask_strategy: ['strategy'],
  end_time: ['endTime'],
  webhook: ['webhook'],
};
const FIELD_LABELS: Record<ApiField, string> = {
  schedule: 'Cron expression',
  timezone: 'Time zone',
  input: 'Messages',
  enabled: 'Runs on schedule',
  thread: 'Thread of each run',
  multitask_strategy: 'When the thread is still busy at a tick',
  end_time: 'End',
  webhook: 'Webhook URL',
};

/** The API fields whose values differ between two versions of the form. */
function changedFields(a: EditValues, b: EditValues): ApiField[] {
  const x = apiValues(a);
  const y = apiValues(b);
  return (Object.keys(x) as ApiField[]).filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k]));
}

/** A field's value as a person reads it (the latest version's, beside a change kept over it). */
function shown(field: ApiField, v: EditValues): string {
  const a = apiValues(v);
  if (field === 'input') return a.input.map((m) => `${roleName(m.role)}: ${m.content}`).join(' / ');
  if (field === 'enabled') return a.enabled ? 'on' : 'off (paused)';
  if (field === 'thread') return a.thread === 'new' ? 'a new thread for every run' : a.thread;
  if (field === 'multitask_strategy') return STRATEGIES.find((o) => o.value === a.multitask_strategy)?.label ?? a.multitask_strategy;
  if (field === 'end_time') return a.end_time ? new Date(a.end_time).toLocaleString() : 'none';
  if (field === 'webhook') return a.webhook || 'none';
  return String(a[field]);
}

function roleName(role: ScheduleMessage['role']): string {
  return role === 'user' ? 'user' : role === 'assistant' ? 'assistant' : 'system';
}

/** What a person changed in the form: the values of the fields that differ from the version it opened on. */
export type KeptChanges = Partial<EditValues>;

/**
 * Change a schedule: its expression, zone, messages, whether it runs, and the options the API has
 * (one thread for every run, what a tick does when that thread is busy, an end, a webhook). Only the
 * fields changed here are sent, and only over the version the form was opened on (`If-Match`): if it
 * was changed elsewhere meanwhile, nothing is saved; the latest version can be loaded, and what the
 * person changed is kept over it (each such field with the latest's value beside it), never dropped.
 */
export function EditSchedule({
  schedule: s,
  kept,
  agentName,
  onDone,
  onLatest,
}: {
  schedule: Schedule;
  /** Changes made over an older version, kept over this one after a refused save. */
  kept?: KeptChanges | undefined;
  agentName: string;
  onDone: () => void;
  onLatest: (latest: Schedule, kept: KeptChanges) => void;
}) {
  const client = useQueryClient();
  const saved = useMemo(() => valuesOf(s), [s]);
  const [values, setValues] = useState<EditValues>(() => ({ ...saved, ...kept }));
  // The fields kept over the latest version that still differ from it, said once above the form.
  const [keptOver] = useState(() => (kept ? changedFields({ ...saved, ...kept }, saved) : []));
  const [errors, setErrors] = useState<Partial<Record<EditField, string>>>({});
  const [messageErrors, setMessageErrors] = useState<Record<number, string>>({});
  const set = (patch: Partial<EditValues>) => setValues((v) => ({ ...v, ...patch }));
  const { messages } = values;
  const last = messages.length - 1;
  const setMessage = (i: number, content: string) => {
    set({ messages: messages.map((m, j) => (j === i ? { ...m, content } : m)) });
    setMessageErrors((x) => ({ ...x, [i]: undefined }) as Record<number, string>);
  };
  const body = () => {
    const now = apiValues(values);
    const changes: Schemas['UpdateScheduleRequest'] = {};
    for (const field of changedFields(values, saved)) {
      if (field === 'input') changes.input = { messages: now.input };
      else if (field === 'end_time') changes.end_time = now.end_time ? new Date(now.end_time).toISOString() : null;
      else if (field === 'webhook') changes.webhook = now.webhook || null;
      else if (field === 'schedule' || field === 'timezone' || field === 'thread') changes[field] = now[field];
      else if (field === 'enabled') changes.enabled = now.enabled;
      else changes.multitask_strategy = now.multitask_strategy;
    }
    return changes;
  };
  const save = useMutation({
    // Only over the version the form was opened on: a change made elsewhere meanwhile is not overwritten.
    mutationFn: async (changes: Schemas['UpdateScheduleRequest']) =>
      ok(await api.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: s.id }, header: { 'if-match': `"${s.updated_at}"` } }, body: changes })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['schedules'] });
      onDone();
    },
    onError: (error) => setErrors(placedErrors(error)),
  });
  // A reason about the busy-thread strategy while its input is hidden (a new thread for every run) has no input to go under.
  const placed = (field: string) => inputOf(field) !== null && !(inputOf(field) === 'multitask_strategy' && values.threadMode === 'new');
  const stale = save.error instanceof ApiError && save.error.status === 412;
  const unplaced = save.error && !stale && !(save.error instanceof ApiError && save.error.fields.length > 0 && save.error.fields.every((f) => placed(f.field)));
  const latest = useMutation({
    mutationFn: async () => ok(await api.GET('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: s.id } } })),
    onSuccess: (fresh) => {
      void client.invalidateQueries({ queryKey: ['schedules'] });
      // What the person changed goes over the latest version, field by field.
      const mine: KeptChanges = {};
      for (const field of changedFields(values, saved)) for (const key of FORM_VALUES[field]) Object.assign(mine, { [key]: values[key] });
      onLatest(fresh, mine);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: typeof errors = {};
    if (!values.cron.trim()) found.schedule = 'Write a cron expression, e.g. 0 9 * * 1-5';
    if (!values.zone.trim()) found.timezone = 'Choose a time zone, e.g. UTC';
    const empty = Object.fromEntries(messages.flatMap((m, i) => (m.content.trim() ? [] : [[i, i === last ? 'Write the message each run is sent' : 'Write this message, or the schedule cannot keep it']])));
    if (empty[last]) found.message = empty[last];
    Object.assign(found, checkedOptions(values));
    setErrors(found);
    setMessageErrors(empty);
    save.reset();
    if (Object.keys(found).length > 0 || Object.keys(empty).length > 0) return;
    const changes = body();
    if (Object.keys(changes).length === 0) onDone();
    else save.mutate(changes);
  };
  const edited = (field: EditField) => setErrors((x) => ({ ...x, [field]: undefined }));
  const several = messages.length > 1;
  const labelOf = (i: number) => `Message ${i + 1} of ${messages.length} (${roleName(messages[i]!.role)})`;
  return (
    <form onSubmit={submit} noValidate aria-label={`Edit the schedule of ${agentName}`}>
      <Stack>
        <Text size="sm">
          Agent: <b>{agentName}</b>
        </Text>
        {keptOver.length > 0 && (
          <Alert color="blue" title="Your changes are kept over the latest version" role="status">
            <Stack gap={4}>
              <Text size="sm">The form now shows the latest version with your unsaved changes on top. Where the latest differs from what you wrote, its value is:</Text>
              {keptOver.map((field) => (
                <Text size="sm" key={field} className="wrap-anywhere" aria-label={`Latest ${FIELD_LABELS[field]}`}>
                  <b>{FIELD_LABELS[field]}</b>: {shown(field, saved)}
                </Text>
              ))}
              <Text size="sm">Save changes to apply yours over it.</Text>
            </Stack>
          </Alert>
        )}
        <WhenFields
          cron={values.cron}
          setCron={(cron) => set({ cron })}
          zone={values.zone}
          setZone={(zone) => set({ zone })}
          message={messages[last]?.content ?? ''}
          setMessage={(content) => setMessage(last, content)}
          messageLabel={several ? labelOf(last) : undefined}
          messageDescription={several ? `Each run is sent all ${messages.length} messages, in this order` : 'What each run is sent'}
          before={messages.slice(0, -1).map((m, i) => (
            <Textarea key={i} label={labelOf(i)} autosize minRows={2} value={m.content} onChange={(e) => setMessage(i, e.currentTarget.value)} required error={messageErrors[i]} />
          ))}
          errors={errors}
          edited={edited}
          autofocus
        />
        <OptionFields options={values} set={set} errors={errors} edited={edited} />
        {save.error && unplaced && <ServerError error={save.error} />}
        {stale && (
          <Alert color="yellow" title="Changed elsewhere" role="alert">
            <Stack gap="xs" align="flex-start">
              <Text size="sm">This schedule was changed since you opened it (by another tab, a person or the CLI): nothing was saved. Load the latest version: your changes are kept over it, to check and save again.</Text>
              <Button size="compact-sm" variant="default" onClick={() => latest.mutate()} loading={latest.isPending}>
                Load the latest
              </Button>
              {latest.error && <ServerError error={latest.error} />}
            </Stack>
          </Alert>
        )}
        <Button type="submit" loading={save.isPending}>
          Save changes
        </Button>
      </Stack>
    </form>
  );
}
