// Schedules: the workspace's cron prompts (of one agent with `?agent=ID`, the agent page's link), each
// with its next run and its last run's outcome; create, edit, pause/resume, delete (after asking), and a
// schedule's recent runs with links to their threads and traces.
import { Alert, Anchor, Badge, Button, Code, Group, Modal, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useAgentNames } from '../agentNames';
import { api, ApiError, canWrite, ok, type Schemas } from '../api';
import { useSession } from '../App';
import { ConfirmDialog } from '../Confirm';
import { PageButtons, usePages } from '../Pager';
import { agentQuery, schedulesQuery, ticksQuery } from '../queries';
import { CreateSchedule, EditSchedule, type KeptChanges } from './ScheduleForm';

type Schedule = Schemas['Schedule'];
type Tick = Schemas['ScheduleTick'];

const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** An instant in the browser's zone, and in the schedule's when that differs. */
function When({ at, zone }: { at: string; zone: string }) {
  const date = new Date(at);
  return (
    <>
      <Text size="sm">{date.toLocaleString()}</Text>
      {zone !== BROWSER_ZONE && (
        <Text size="xs" c="dimmed">
          {date.toLocaleString(undefined, { timeZone: zone, dateStyle: 'short', timeStyle: 'short' })} {zone}
        </Text>
      )}
    </>
  );
}

/** What a tick came to: its run's status when it started one, else why not. */
function outcome(t: Tick): { label: string; color: string } {
  if (t.state === 'started') {
    const status = t.run?.status ?? 'started';
    return { label: status, color: status === 'success' ? 'green' : status === 'error' || status === 'timeout' ? 'red' : status === 'interrupted' ? 'yellow' : 'blue' };
  }
  return { label: t.state, color: t.state === 'failed' ? 'red' : t.state === 'skipped' ? 'yellow' : 'blue' };
}

function TickOutcome({ tick }: { tick: Tick }) {
  const o = outcome(tick);
  return (
    <Group gap={4}>
      <Badge color={o.color} variant="light">
        {o.label}
      </Badge>
      {tick.catch_up && (
        <Badge color="gray" variant="light">
          catch-up
        </Badge>
      )}
    </Group>
  );
}

/** A refused change in words: each field the server named and why, else its message. */
function inWords(error: Error): string {
  return error instanceof ApiError && error.fields.length ? error.fields.map((f) => f.message).join('; ') : error.message;
}

export default function Schedules() {
  const session = useSession().data;
  const writable = canWrite(session);
  const [params] = useSearchParams();
  const agentId = params.get('agent');
  const agent = useQuery({ ...agentQuery(agentId ?? ''), enabled: Boolean(agentId) });
  // Pages of 50, newest first; another agent's list starts at its first page.
  const pages = usePages<string>(agentId);
  const list = useQuery({ ...schedulesQuery(agentId, pages.page), refetchInterval: 10_000 });
  const agentName = useAgentNames(list.data?.items.map((s) => s.agent_id) ?? []);
  const [opened, { open, close }] = useDisclosure(false);
  const [ticksOf, setTicksOf] = useState<Schedule | null>(null);
  // The schedule as it was when Edit was pressed: the form sends what changed from it.
  // The schedule being edited, and the changes kept over it after a refused save (its latest version loaded).
  const [editing, setEditingState] = useState<{ schedule: Schedule; kept?: KeptChanges } | null>(null);
  const setEditing = (schedule: Schedule | null, kept?: KeptChanges) => setEditingState(schedule ? { schedule, kept } : null);
  return (
    <Stack>
      <Group justify="space-between">
        <div>
          {agentId && (
            <Anchor component={Link} to={`/agents/${agentId}`} size="sm">
              ← {agent.data?.name ?? 'Agent'}
            </Anchor>
          )}
          <Title order={2} className="wrap-anywhere">
            {agentId ? `Schedules of ${agent.data?.name ?? 'an agent'}` : 'Schedules'}
          </Title>
        </div>
        {writable && <Button onClick={open}>New schedule</Button>}
      </Group>
      <Text size="sm" c="dimmed">
        A schedule starts a run of its agent at every tick of a cron expression, read in its time zone, each on a new thread (or all on one).{' '}
        {agentId && (
          <Anchor component={Link} to="/schedules" size="sm" underline="always">
            Show every agent’s schedules
          </Anchor>
        )}
      </Text>
      {list.error && <Alert color="red">{list.error.message}</Alert>}
      <Table.ScrollContainer minWidth={360}>
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Schedule</Table.Th>
              <Table.Th>Next run</Table.Th>
              <Table.Th visibleFrom="sm">Last run</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.items.map((s) => (
              <ScheduleRow key={s.id} schedule={s} agentName={agentName(s.agent_id)} writable={writable} onRuns={() => setTicksOf(s)} onEdit={() => setEditing(s)} />
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {list.data?.items.length === 0 && <Text c="dimmed">{pages.page !== undefined ? 'No more schedules.' : agentId ? 'This agent has no schedules.' : 'No schedules yet.'}</Text>}
      <PageButtons pages={pages} next={list.data?.next_cursor} />
      <Modal opened={opened} onClose={close} title="New schedule" size="lg">
        <CreateSchedule agentId={agentId} agentName={agent.data?.name ?? null} onDone={close} />
      </Modal>
      <Modal opened={editing !== null} onClose={() => setEditing(null)} title="Edit schedule" size="lg">
        {editing && <EditSchedule key={editing.schedule.updated_at} schedule={editing.schedule} kept={editing.kept} agentName={agentName(editing.schedule.agent_id)} onDone={() => setEditing(null)} onLatest={setEditing} />}
      </Modal>
      <Modal opened={ticksOf !== null} onClose={() => setTicksOf(null)} title="Recent runs" size="lg">
        {ticksOf && <Ticks schedule={ticksOf} />}
      </Modal>
    </Stack>
  );
}

function ScheduleRow({ schedule: s, agentName, writable, onRuns, onEdit }: { schedule: Schedule; agentName: string; writable: boolean; onRuns: () => void; onEdit: () => void }) {
  const client = useQueryClient();
  const toggle = useMutation({
    mutationFn: async () => ok(await api.PATCH('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: s.id } }, body: { enabled: !s.enabled } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['schedules'] }),
  });
  const [confirmOpen, confirm] = useDisclosure(false);
  const remove = useMutation({
    mutationFn: async () => ok(await api.DELETE('/v1/deepagents/schedules/{schedule_id}', { params: { path: { schedule_id: s.id } } })),
    onSuccess: () => {
      confirm.close();
      void client.invalidateQueries({ queryKey: ['schedules'] });
    },
  });
  const closeDelete = () => {
    confirm.close();
    remove.reset();
  };
  const label = `${agentName} ${s.schedule}`;
  const ended = s.enabled && !s.next_run_at;
  return (
    <Table.Tr aria-label={`Schedule ${label}`}>
      <Table.Td>
        <Anchor component={Link} to={`/agents/${s.agent_id}`} size="sm" fw={600} className="wrap-anywhere">
          {agentName}
        </Anchor>
        {/* The expression and its zone each on one line: a phone puts the zone under it. */}
        <Group gap={4} align="center">
          <Code className="nowrap">{s.schedule}</Code>
          <Text size="xs" c="dimmed" className="nowrap">
            {s.timezone}
          </Text>
        </Group>
        <Text size="xs" c="dimmed" lineClamp={1} className="wrap-anywhere">
          {s.input.messages.length > 1 && `${s.input.messages.length} messages, the last: `}
          {s.input.messages.at(-1)?.content}
        </Text>
        <ScheduleOptions schedule={s} />
      </Table.Td>
      <Table.Td>
        {s.next_run_at ? (
          <When at={s.next_run_at} zone={s.timezone} />
        ) : (
          <Badge color="gray" variant="light">
            {ended ? 'Ended' : 'Paused'}
          </Badge>
        )}
      </Table.Td>
      <Table.Td visibleFrom="sm">
        {s.last_run ? (
          <Stack gap={2}>
            <TickOutcome tick={s.last_run} />
            <Text size="xs" c="dimmed">
              {new Date(s.last_run.tick_at).toLocaleString()}
            </Text>
            {s.last_run.error && (
              <Text size="xs" c="red" className="wrap-anywhere">
                {s.last_run.error.message}
              </Text>
            )}
          </Stack>
        ) : (
          <Text size="sm" c="dimmed">
            Not yet
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Group gap={4} wrap="wrap">
          <Button size="compact-sm" variant="default" onClick={onRuns} aria-label={`Recent runs of ${label}`}>
            Runs
          </Button>
          {writable && (
            <Button size="compact-sm" variant="default" onClick={onEdit} aria-label={`Edit ${label}`}>
              Edit
            </Button>
          )}
          {writable && (
            <Button size="compact-sm" variant="default" onClick={() => toggle.mutate()} loading={toggle.isPending} aria-label={`${s.enabled ? 'Pause' : 'Resume'} ${label}`}>
              {s.enabled ? 'Pause' : 'Resume'}
            </Button>
          )}
          {writable && (
            <Button size="compact-sm" variant="subtle" color="red" onClick={confirm.open} aria-label={`Delete ${label}`}>
              Delete
            </Button>
          )}
        </Group>
        {toggle.error && (
          <Text size="xs" c="red" role="alert" className="wrap-anywhere" mt={4}>
            {s.enabled ? 'Not paused' : 'Not resumed'}: {inWords(toggle.error)}
          </Text>
        )}
        <ConfirmDialog opened={confirmOpen} onClose={closeDelete} title="Delete schedule" confirmLabel="Delete schedule" onConfirm={() => remove.mutate()} pending={remove.isPending} error={remove.error}>
          <Text>
            Delete the schedule <Code>{s.schedule}</Code> ({s.timezone}) of <b>{agentName}</b>? It starts no more runs; the threads and runs it started stay.
          </Text>
        </ConfirmDialog>
      </Table.Td>
    </Table.Tr>
  );
}

const IF_BUSY: Record<Schedule['multitask_strategy'], string> = {
  reject: 'skips the tick',
  enqueue: 'queues the run',
  interrupt: 'interrupts the busy run',
  rollback: 'cancels the busy run',
};

/** The options a schedule has beyond its defaults: one thread for every run, an end, a webhook. */
function ScheduleOptions({ schedule: s }: { schedule: Schedule }) {
  const lines: ReactNode[] = [];
  if (s.thread !== 'new') {
    lines.push(
      <>
        Every run on thread{' '}
        <Anchor component={Link} to={`/threads/${s.thread}`} size="xs" underline="always">
          {s.thread.slice(0, 8)}
        </Anchor>
        {s.multitask_strategy !== 'reject' && `; if it is busy, ${IF_BUSY[s.multitask_strategy]}`}
      </>,
    );
  }
  if (s.end_time) lines.push(<>Ends {new Date(s.end_time).toLocaleString()}</>);
  if (s.webhook) lines.push(<>Webhook {s.webhook}</>);
  return lines.map((line, i) => (
    <Text key={i} size="xs" c="dimmed" className="wrap-anywhere">
      {line}
    </Text>
  ));
}

/** A schedule's ticks, newest first, each with its run's thread and trace. */
function Ticks({ schedule }: { schedule: Schedule }) {
  const pages = usePages<string>(schedule.id);
  const ticks = useQuery(ticksQuery(schedule.id, pages.page));
  return (
    <Stack>
      <Text size="sm">
        <Code>{schedule.schedule}</Code> in {schedule.timezone}, newest first.
      </Text>
      {ticks.error && <Alert color="red">{ticks.error.message}</Alert>}
      {ticks.data?.items.length === 0 && <Text c="dimmed">{pages.page === undefined ? 'It has not fired yet.' : 'No more runs.'}</Text>}
      {ticks.data && ticks.data.items.length > 0 && (
        <Table.ScrollContainer minWidth={320}>
          <Table striped aria-label="Runs of the schedule">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Tick</Table.Th>
                <Table.Th>Outcome</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Links</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {ticks.data.items.map((t) => (
                <Table.Tr key={t.tick_at}>
                  <Table.Td>
                    <Text size="sm">{new Date(t.tick_at).toLocaleString()}</Text>
                  </Table.Td>
                  <Table.Td>
                    <TickOutcome tick={t} />
                    {t.error && (
                      <Text size="xs" c="dimmed" className="wrap-anywhere">
                        {t.error.message}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      {t.thread_id && (
                        <Anchor component={Link} to={`/threads/${t.thread_id}`} size="sm">
                          Thread
                        </Anchor>
                      )}
                      {t.run_id && t.thread_id && (
                        <Anchor component={Link} to={`/traces/${t.run_id}?thread_id=${t.thread_id}`} size="sm">
                          Trace
                        </Anchor>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <PageButtons pages={pages} next={ticks.data?.next_cursor} size="compact-sm" />
    </Stack>
  );
}
