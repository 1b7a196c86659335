// The Schedules page's form for a new schedule: agent, cron expression, time zone and message. The
// server's reasons for a refusal go under the inputs they are about, in its words.
import { Autocomplete, Button, Select, Stack, Textarea, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { api, ApiError, ok } from '../api';
import { agentsQuery } from '../queries';
import { ServerError } from '../ServerError';

const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const ZONES = [...new Set(['UTC', BROWSER_ZONE, ...Intl.supportedValuesOf('timeZone')])];

type Field = 'agent' | 'schedule' | 'timezone' | 'message';

/** Which input of the form a field the server named belongs to. */
function inputOf(field: string): Field | null {
  if (field === 'agent_id') return 'agent';
  if (field === 'schedule' || field === 'timezone') return field;
  if (field.startsWith('input') || field.startsWith('messages')) return 'message';
  return null;
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
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const create = useMutation({
    mutationFn: async () =>
      ok(
        await api.POST('/v1/deepagents/schedules', {
          body: { agent_id: agent!.value, schedule: cron.trim(), timezone: zone.trim(), input: { messages: [{ role: 'user', content: message }] } },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['schedules'] });
      setCron('');
      setMessage('');
      onDone();
    },
    // The server's reasons go beside the inputs they are about; any other stays in the alert below.
    onError: (error) => {
      const found: typeof errors = {};
      if (error instanceof ApiError) for (const f of error.fields) {
        const input = inputOf(f.field);
        if (input) found[input] = found[input] ? `${found[input]}; ${f.message}` : f.message;
      }
      setErrors(found);
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
    setErrors(found);
    create.reset();
    if (Object.keys(found).length === 0) create.mutate();
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
        <TextInput
          label="Cron expression"
          description="5 fields: minute hour day-of-month month day-of-week (0 9 * * 1-5: 09:00 on weekdays), or 6 with seconds first"
          placeholder="0 9 * * 1-5"
          value={cron}
          onChange={(e) => {
            setCron(e.currentTarget.value);
            edited('schedule');
          }}
          required
          error={errors.schedule}
          classNames={{ input: 'mono' }}
          data-autofocus={agent ? true : undefined}
        />
        <Autocomplete
          label="Time zone"
          description="The expression is read in this IANA zone; daylight-saving changes follow it"
          data={ZONES}
          limit={30}
          value={zone}
          onChange={(v) => {
            setZone(v);
            edited('timezone');
          }}
          required
          error={errors.timezone}
        />
        <Textarea
          label="Message"
          description="What each run is sent, on a new thread"
          autosize
          minRows={3}
          value={message}
          onChange={(e) => {
            setMessage(e.currentTarget.value);
            edited('message');
          }}
          required
          error={errors.message}
        />
        {create.error && unplaced && <ServerError error={create.error} />}
        <Button type="submit" loading={create.isPending}>
          Create schedule
        </Button>
      </Stack>
    </form>
  );
}
