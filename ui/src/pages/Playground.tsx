// The playground: threads of one agent and a chat over Hangar's LangGraph protocol through the
// official `useStream` hook (streamed tokens, tool calls, subagents, approvals, resumable runs).
import { Alert, Anchor, Badge, Button, Card, Code, Group, JsonInput, Loader, NavLink, Paper, ScrollArea, Select, SimpleGrid, Stack, Text, Textarea, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useStream, type UseStream } from '@langchain/langgraph-sdk/react';
import type { Message } from '@langchain/langgraph-sdk';
import { lazy, Suspense, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { api, ApiError, canWrite, describe, getCsrfToken, type Schemas } from '../api';
import { useSession } from '../App';
import { nextOffset, PageButtons, usePages } from '../Pager';
import { agentQuery, infoQuery, RUNS_PAGE, runsQuery, threadQuery, THREADS_PAGE, threadsQuery } from '../queries';
import { LoadError } from '../NotFound';

// Messages are drawn as markdown once react-markdown has loaded (as plain text until then): the page
// and its Message box do not wait for it.
const loadMarkdown = () => import('react-markdown');
// A subagent's messages (those of a `tools:<id>` subgraph namespace) belong to its `task` call, not
// to the conversation: without this useStream shows them as the main agent's, which also makes the
// `task` calls look completed while their subagents still run. (Only the deep-agent overload of
// useStream's options names this option, hence a constant spread in.)
const SUBAGENT_OPTIONS = { filterSubagentMessages: true };
const Markdown = lazy(loadMarkdown);

interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
}
interface ReviewConfig {
  action_name: string;
  allowed_decisions?: string[];
}
interface ApprovalRequest {
  action_requests?: ActionRequest[];
  review_configs?: ReviewConfig[];
}
/** Whether an interrupt's value is an approval request (other pauses have no cards). */
function isApprovalRequest(value: unknown): value is ApprovalRequest {
  return !!value && typeof value === 'object' && Array.isArray((value as ApprovalRequest).action_requests);
}
type Decision = { type: 'approve' } | { type: 'edit'; edited_action: { name: string; args: Record<string, unknown> } } | { type: 'reject'; message?: string } | { type: 'respond'; message: string };
interface Todo {
  content: string;
  status: string;
}
interface AgentState extends Record<string, unknown> {
  messages: Message[];
  todos?: Todo[];
  files?: Record<string, { content?: string[] | string } | string>;
}

/** How often an open thread's page asks whether a run started elsewhere, while it is in view. */
const RUNS_POLL_MS = 3000;

const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * What a failed request of the stream says: the SDK's HTTP errors carry the answer's raw body
 * (`HTTP 404: {"type":…,"detail":…}`), which is read for its message as every other request's is.
 */
function streamError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (unreachable(error)) return 'Hangar could not be reached: the server may be stopped or restarting.';
  const { status, text: body } = error as Error & { status?: unknown; text?: unknown };
  if (typeof status !== 'number' || typeof body !== 'string') return error.message;
  try {
    return describe(JSON.parse(body), status);
  } catch {
    return body.trim() || `request failed (${status})`;
  }
}

/**
 * Whether the stream's request never reached Hangar (the SDK's "Unable to connect to LangGraph
 * server", which named a server the person never heard of, as if a run had failed).
 */
function unreachable(error: unknown): boolean {
  return error instanceof Error && (error.name === 'ConnectionError' || (error instanceof TypeError && /fetch/i.test(error.message)));
}

function text(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('');
}

/**
 * What a thread is about, as chat apps name one: its first message from a person, on one line and
 * cut short. The threads list carries each thread's values, so this costs no request.
 */
export function threadTitle(values: Record<string, unknown>): string | null {
  const messages = Array.isArray(values.messages) ? (values.messages as Message[]) : [];
  const first = messages.find((m) => m.type === 'human' || (m as { role?: unknown }).role === 'user');
  const said = first ? text(first.content).replace(/\s+/g, ' ').trim() : '';
  if (!said) return null;
  return said.length > 80 ? `${said.slice(0, 79).trimEnd()}…` : said;
}

export default function Playground() {
  const params = useParams();
  const navigate = useNavigate();
  const location = useLocation();
  // A new thread's page knows its agent from the navigation, so the chat stays mounted (and its
  // stream open) while the URL becomes /threads/{id}.
  const fromNavigation = (location.state as { agentId?: string } | null)?.agentId;
  // /threads/{id} deep links find the agent through the thread.
  const threadOnly = useQuery({ ...threadQuery(params.threadId ?? ''), enabled: Boolean(params.threadId) && !fromNavigation });
  const agentId = params.agentId ?? fromNavigation ?? threadOnly.data?.agent_id;
  const threadId = params.threadId ?? null;
  if (threadOnly.error) return <LoadError error={threadOnly.error} kind="threadId" />;
  if (!agentId) return <Loader aria-label="Loading thread" />;
  return <Chat key={agentId} agentId={agentId} threadId={threadId} onThread={(id) => navigate(`/threads/${id}`, { replace: !threadId, state: { agentId } })} />;
}

function Chat({ agentId, threadId, onThread }: { agentId: string; threadId: string | null; onThread: (id: string) => void }) {
  const session = useSession().data;
  const writable = canWrite(session);
  const client = useQueryClient();
  const agent = useQuery(agentQuery(agentId));
  // A deleted agent's threads stay readable; nothing can run on them.
  const agentGone = agent.error instanceof ApiError && agent.error.status === 404;
  const [statusFilter, setStatusFilter] = useState<string | null>(null);
  // Threads in pages of 50 (another status filter starts at its first), a thread's runs in pages of
  // 20; the thread's latest runs (the first page) are the ones to cancel and to time tool calls by.
  const threadPages = usePages<number>(statusFilter);
  const threads = useQuery(threadsQuery(agentId, statusFilter, threadPages.page));
  const runPages = usePages<number>(threadId);
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['threads', agentId] });
    void client.invalidateQueries({ queryKey: ['runs'] });
  };
  const csrf = getCsrfToken();
  // The runs this page's stream started or joined (see the join below).
  const followed = useRef(new Set<string>());
  const [input, setInput] = useState('');
  // The message being sent, until its run is created.
  const unsent = useRef<string | null>(null);
  const [notSent, setNotSent] = useState(false);
  // The run whose stream the page shows now, the one its Cancel button stops.
  const shown = useRef<string | null>(null);
  const stream = useStream<AgentState>({
    apiUrl: `${window.location.origin}/v1/deepagents`,
    apiKey: null,
    assistantId: agentId,
    threadId,
    onThreadId: onThread,
    reconnectOnMount: true,
    defaultHeaders: csrf ? { 'X-CSRF-Token': csrf } : {},
    messagesKey: 'messages',
    onCreated: (run) => {
      unsent.current = null;
      followed.current.add(run.run_id);
      shown.current = run.run_id;
      refresh();
    },
    onFinish: refresh,
    onError: (error) => {
      // A message that never reached the server goes back into the message box, to send again.
      if (unreachable(error) && unsent.current) {
        const content = unsent.current;
        setInput((now) => (now.trim() ? now : content));
        setNotSent(true);
      }
      unsent.current = null;
      refresh();
    },
    fetchStateHistory: false,
    ...SUBAGENT_OPTIONS,
  }) as unknown as UseStream<AgentState>; // the non-deep-agent overload's type omits the tool-call and subagent helpers it returns
  const streaming = stream.isLoading;
  // The thread's latest runs, read again every few seconds while the page is in view (TanStack Query
  // pauses the interval in a hidden tab) and shows no run: a run started elsewhere (another tab, a
  // schedule, the API) is noticed within seconds and joined below. The page once noticed it only when
  // it regained focus. Hangar has no thread-level stream to wait on, and this is one small read.
  const runs = useQuery({ ...runsQuery(threadId), refetchInterval: threadId && !streaming ? RUNS_POLL_MS : false });
  const shownRuns = useQuery(runsQuery(threadId, runPages.page));
  useEffect(() => void loadMarkdown(), []); // after the first paint, before the first message
  const send = (e?: FormEvent) => {
    e?.preventDefault();
    const content = input.trim();
    if (!content) return;
    setInput('');
    unsent.current = content;
    setNotSent(false);
    void stream.submit(
      { messages: [{ type: 'human', content }] },
      {
        config: { configurable: { user_timezone: timeZone } },
        streamMode: ['values', 'messages-tuple', 'updates'],
        streamSubgraphs: true,
        streamResumable: true,
        onDisconnect: 'continue',
        optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), { type: 'human', content }] as Message[] }),
      },
    );
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) send(e as unknown as FormEvent);
  };
  const decide = (resume: { decisions: Decision[] } | Record<string, { decisions: Decision[] }>) =>
    void stream.submit(null, {
      command: { resume },
      config: { configurable: { user_timezone: timeZone } },
      streamMode: ['values', 'messages-tuple', 'updates'],
      streamSubgraphs: true,
      streamResumable: true,
      onDisconnect: 'continue',
    });
  const activeRun = runs.data?.find((r) => r.status === 'pending' || r.status === 'running');
  // A run of this thread that this page did not start (another tab's, a schedule's, the API's) is
  // joined from its first event: a thread's state is saved only when its run ends, so without it
  // the page showed nothing of a busy thread's first run until then. (A run this tab started before
  // a reload is joined again by useStream itself, from the id it keeps in sessionStorage.)
  // The oldest first: a run queued behind another (multitask `enqueue`) is joined once that one ends.
  // A run that started and ended elsewhere between two reads is joined too: its stream, replayed from
  // the run's log, brings the conversation up to date (the runs the page saw on its first read are
  // already in the thread's state it read).
  const activeRunId = runs.data?.findLast((r) => r.status === 'pending' || r.status === 'running')?.run_id;
  const seen = useRef<{ threadId: string; runs: Set<string> } | null>(null);
  if (threadId && runs.data && seen.current?.threadId !== threadId) seen.current = { threadId, runs: new Set(runs.data.map((r) => r.run_id)) };
  const endedElsewhere = runs.data?.find((r) => !seen.current?.runs.has(r.run_id) && !followed.current.has(r.run_id))?.run_id;
  const joinStream = stream.joinStream;
  useEffect(() => {
    const runId = activeRunId ?? endedElsewhere;
    if (!threadId || !runId || streaming) return;
    for (const r of runs.data ?? []) seen.current?.runs.add(r.run_id);
    const kept = window.sessionStorage.getItem(`lg:stream:${threadId}`);
    if (kept) followed.current.add(kept);
    if (followed.current.has(runId)) return;
    followed.current.add(runId);
    shown.current = runId;
    void client.invalidateQueries({ queryKey: ['threads', agentId] }); // its status in the threads list
    void joinStream(runId);
  }, [threadId, activeRunId, endedElsewhere, streaming, joinStream, runs.data, client, agentId]);
  // Whether runs have traces to read and link to (HANGAR_TRACING).
  const tracing = useQuery(infoQuery).data?.tracing;
  const traced = useTraceFacts(threadId, runs.data, tracing);
  // The `task` calls whose subagent's steps neither the stream nor a trace shows (tracing is off, or
  // the run's trace is gone): those are read from the runs' event logs.
  const unexplained = streaming || !traced.settled ? [] : stream.messages.flatMap((m) =>
    m.type === 'ai' ? (m.tool_calls ?? []).flatMap((c) => (c.name === 'task' && c.id && !traced.subagents[c.id] && !shownLive(stream, c.id) ? [c.id] : [])) : [],
  );
  const logged = useLoggedSubagents(stream, threadId, runs.data, unexplained);
  const [cancelling, setCancelling] = useState(false);
  const cancel = async () => {
    // The run is cancelled on the server and its stream, which the server ends once the run is
    // over, is left to finish: the conversation keeps what was shown. useStream's stop() is not used
    // for a run we can name: it re-reads the thread's state at once, before the cancelled run's state
    // is saved (runs are checkpointed when they end), and that empty read blanked the conversation.
    // useStream keeps the id of a run it started or joined in sessionStorage under `lg:stream:<thread>`.
    // A run joined (not started) by this page is not kept there: the page remembers which it shows.
    const runId = (threadId ? window.sessionStorage.getItem(`lg:stream:${threadId}`) : null) ?? (stream.isLoading ? shown.current : null) ?? activeRun?.run_id;
    setCancelling(true);
    try {
      if (threadId && runId) {
        const res = await api.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: runId } } });
        // A run that had already ended answers 200 as well; its stream ends by itself.
        if (res.error) await stream.stop();
      } else {
        await stream.stop();
      }
    } finally {
      refresh();
    }
  };
  // Cancelling lasts until the run's stream has ended.
  useEffect(() => {
    if (!stream.isLoading) setCancelling(false);
  }, [stream.isLoading]);
  // Every action request of every pending approval request, each a card of its own: subagents that
  // paused in parallel each wait on their own interrupt (with its own id). Each call gets its decision
  // from a person (a decision on one call never answers another); they are sent together once every
  // call has one: `{decisions}` for one interrupt, `{<interrupt id>: {decisions}}` for several.
  const pending = stream.interrupts.flatMap((i) => (isApprovalRequest(i.value) ? [{ id: i.id ?? '', request: i.value }] : []));
  const cards = pending.flatMap(({ id, request }) =>
    (request.action_requests ?? []).map((req, index) => ({ key: `${id}#${index}`, req, config: request.review_configs?.find((c) => c.action_name === req.name) })),
  );
  // The decisions given so far hold while the same calls are pending (in whatever order they are listed).
  const pendingKey = cards.map((c) => c.key).sort().join(' ');
  const [answered, setAnswers] = useState<{ pending: string; decisions: Record<string, Decision> }>({ pending: '', decisions: {} });
  const answers = answered.pending === pendingKey ? answered : { pending: pendingKey, decisions: {} };
  const answer = (key: string, d: Decision) => {
    const decisions = { ...answers.decisions, [key]: d };
    // A lone call's decision is sent at once (its card keeps its buttons should the resume fail).
    if (cards.length > 1) setAnswers({ pending: pendingKey, decisions });
    if (!cards.every((c) => decisions[c.key])) return;
    const listOf = (id: string, request: ApprovalRequest) => (request.action_requests ?? []).map((_, index) => decisions[`${id}#${index}`]!);
    if (pending.length === 1) decide({ decisions: listOf(pending[0]!.id, pending[0]!.request) });
    else decide(Object.fromEntries(pending.map(({ id, request }) => [id, { decisions: listOf(id, request) }])));
  };
  const unanswer = (key: string) => setAnswers({ pending: pendingKey, decisions: Object.fromEntries(Object.entries(answers.decisions).filter(([k]) => k !== key)) });
  // The thread in view is named by its first message as soon as it is sent: the threads list reads
  // names from each thread's saved state, which a thread's first run saves only once it ends.
  const liveTitle = threadTitle({ messages: stream.messages });
  const titleOf = (t: { id: string; values: Record<string, unknown> }) => threadTitle(t.values) ?? (t.id === threadId ? liveTitle : null);
  const todos = stream.values?.todos ?? [];
  const files = Object.entries(stream.values?.files ?? {});
  const latestRun = runs.data?.[0];

  return (
    <Stack>
      <Group justify="space-between">
        <div>
          <Anchor component={Link} to={`/agents/${agentId}`} size="sm">
            ← {agent.data?.name ?? 'Agent'}
          </Anchor>
          <Title order={2}>Playground</Title>
        </div>
        {writable && (
          <Button variant="default" component={Link} to={`/agents/${agentId}/playground`}>
            New thread
          </Button>
        )}
      </Group>
      <SimpleGrid cols={{ base: 1, md: 3 }} spacing="md" style={{ alignItems: 'start' }}>
        <Paper withBorder p="xs" aria-label="Threads">
          <Select
            label="Thread status"
            placeholder="Any"
            data={['idle', 'busy', 'interrupted', 'error']}
            value={statusFilter}
            onChange={setStatusFilter}
            clearable
            size="xs"
            mb="xs"
          />
          <ScrollArea.Autosize mah={320}>
            {threads.data?.map((t) => (
              <NavLink
                key={t.id}
                component={Link}
                to={`/threads/${t.id}`}
                active={t.id === threadId}
                label={
                  <Text size="sm" lineClamp={2} className="wrap-anywhere" c={titleOf(t) ? undefined : 'dimmed'}>
                    {titleOf(t) ?? 'No message yet'}
                  </Text>
                }
                description={`${new Date(t.created_at).toLocaleString()} · ${t.id.slice(0, 8)}`}
                rightSection={<Badge size="xs" color={t.status === 'interrupted' ? 'orange' : t.status === 'error' ? 'red' : t.status === 'busy' ? 'blue' : 'gray'}>{t.status}</Badge>}
              />
            ))}
            {threads.data?.length === 0 && (
              <Text size="sm" c="dimmed">
                {threadPages.page === undefined ? 'No threads yet.' : 'No more threads.'}
              </Text>
            )}
          </ScrollArea.Autosize>
          <PageButtons pages={threadPages} next={threads.data && nextOffset(threadPages.page, THREADS_PAGE, threads.data.length)} size="xs" />
        </Paper>
        <Stack className="chat-column">
          <Paper withBorder p="sm" aria-label="Conversation" aria-live="polite" aria-busy={stream.isLoading}>
            <Stack gap="sm">
              {stream.isThreadLoading && <Loader size="sm" aria-label="Loading conversation" />}
              {stream.messages.length === 0 && !stream.isThreadLoading && (
                <Text c="dimmed" size="sm">
                  {writable
                    ? `Say something to ${agent.data?.name ?? 'the agent'}.`
                    : threadId
                      ? 'This thread has no message yet.'
                      : 'Pick a thread to read it: a viewer key cannot send messages.'}
                </Text>
              )}
              {stream.messages.map((m, i) => (
                <MessageView key={m.id ?? i} message={m} stream={stream} traced={traced} logged={logged} />
              ))}
              {stream.isLoading && cards.length === 0 && (
                <Group gap="xs">
                  <Loader size="xs" aria-label="Agent is working" />
                  <Text size="sm" c="dimmed">
                    working…
                  </Text>
                </Group>
              )}
            </Stack>
          </Paper>
          {cards.map((c) => (
            <ApprovalCard
              key={c.key}
              request={c.req}
              config={c.config}
              count={cards.length}
              answered={Object.keys(answers.decisions).length}
              decided={answers.decisions[c.key]}
              onDecide={(d) => answer(c.key, d)}
              onChange={() => unanswer(c.key)}
              disabled={!writable}
            />
          ))}
          {stream.error != null && (
            <Alert color="red" title={notSent ? 'Not sent' : unreachable(stream.error) ? 'Hangar could not be reached' : 'Run failed'}>
              {streamError(stream.error)}
              {notSent && ' Your message is back in the message box: send it again once the server is back.'}
            </Alert>
          )}
          {agent.error && (
            <Alert color="red" title={agentGone ? 'This agent does not exist' : 'Could not read the agent'}>
              {agent.error.message}
              {agentGone && '. Its threads stay readable, but cannot run again.'}
            </Alert>
          )}
          {writable && !agentGone && (
            <form onSubmit={send}>
              <Stack gap="xs">
                <Textarea label="Message" placeholder="Ask the agent… (Enter sends, Shift+Enter for a new line)" autosize minRows={2} value={input} onChange={(e) => setInput(e.currentTarget.value)} onKeyDown={onKey} />
                <Group gap="xs">
                  <Button type="submit" disabled={!input.trim() || cards.length > 0}>
                    Send
                  </Button>
                  {stream.isLoading && (
                    <Button variant="light" color="red" onClick={() => void cancel()} loading={cancelling}>
                      Cancel run
                    </Button>
                  )}
                  {latestRun && threadId && tracing !== false && (
                    <Anchor component={Link} to={`/traces/${latestRun.run_id}?thread_id=${threadId}`} size="sm">
                      View trace of the last run
                    </Anchor>
                  )}
                </Group>
              </Stack>
            </form>
          )}
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Paper withBorder p="xs" aria-label="Todos">
              <Text fw={600} size="sm">
                Todos
              </Text>
              {todos.length === 0 && (
                <Text size="sm" c="dimmed">
                  None
                </Text>
              )}
              {todos.map((t, i) => (
                <Text size="sm" key={i}>
                  {t.status === 'completed' ? '☑' : t.status === 'in_progress' ? '▶' : '☐'} {t.content}
                </Text>
              ))}
            </Paper>
            <Paper withBorder p="xs" aria-label="Files">
              <Text fw={600} size="sm">
                Files
              </Text>
              {files.length === 0 && (
                <Text size="sm" c="dimmed">
                  None
                </Text>
              )}
              {files.map(([path, f]) => (
                <details key={path}>
                  <summary>
                    <Text span size="sm" ff="monospace">
                      {path}
                    </Text>
                  </summary>
                  <Code block className="wrap-anywhere">
                    {typeof f === 'string' ? f : Array.isArray(f.content) ? f.content.join('\n') : (f.content ?? '')}
                  </Code>
                </details>
              ))}
            </Paper>
          </SimpleGrid>
          {shownRuns.data && (shownRuns.data.length > 0 || runPages.page !== undefined) && (
            <Paper withBorder p="xs" aria-label="Runs">
              <Text fw={600} size="sm">
                Runs
              </Text>
              {shownRuns.data.length === 0 && (
                <Text size="sm" c="dimmed">
                  No more runs.
                </Text>
              )}
              {shownRuns.data.map((r) => (
                <Group key={r.run_id} gap="xs">
                  <Badge size="xs" color={r.status === 'success' ? 'green' : r.status === 'error' ? 'red' : 'gray'}>
                    {r.status}
                  </Badge>
                  {tracing === false ? (
                    <Text size="sm">Run {r.run_id.slice(0, 8)}</Text>
                  ) : (
                    <Anchor component={Link} to={`/traces/${r.run_id}?thread_id=${r.thread_id}`} size="sm">
                      Trace of run {r.run_id.slice(0, 8)}
                    </Anchor>
                  )}
                </Group>
              ))}
              <PageButtons pages={runPages} next={nextOffset(runPages.page, RUNS_PAGE, shownRuns.data.length)} size="xs" />
            </Paper>
          )}
        </Stack>
      </SimpleGrid>
    </Stack>
  );
}

type Stream = UseStream<AgentState>;

type Tree = Schemas['TraceRunTree'];

/** The first `tool_call_id` in a traced tool run's outputs (the ToolMessage it returned). */
function toolCallIdIn(value: unknown, depth = 0): string | undefined {
  if (!value || typeof value !== 'object' || depth > 6) return undefined;
  const id = (value as { tool_call_id?: unknown }).tool_call_id;
  if (typeof id === 'string') return id;
  for (const v of Object.values(value)) {
    const found = toolCallIdIn(v, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** A message as a trace records it (a subagent's, in the outputs of its chain). */
interface TracedMessage {
  id?: string;
  type?: string;
  content?: Message['content'];
  name?: string;
  status?: string;
  tool_call_id?: string;
  tool_calls?: { id?: string; name: string; args?: Record<string, unknown> }[];
}

/** What the traces of a thread's finished runs tell about its tool calls, each by its call id. */
interface TraceFacts {
  /** How long each call took, in ms. */
  durations: Record<string, number>;
  /** A `task` call's subagent's own messages (its question first), from its chain's outputs. */
  subagents: Record<string, TracedMessage[]>;
  /** Whether every finished run's trace has been read (or found missing). */
  settled: boolean;
}

/**
 * How long each tool call took and what each `task` call's subagent said and did, from the traces of
 * the thread's finished runs: the trace is written when a run ends, so these show once it is over.
 */
function useTraceFacts(threadId: string | null, runs: { run_id: string; status: string }[] | undefined, tracing: boolean | undefined): TraceFacts {
  const finished = (runs ?? []).filter((r) => r.status !== 'pending' && r.status !== 'running').map((r) => r.run_id);
  const query = useQuery({
    queryKey: ['trace-facts', threadId, finished.join(',')],
    enabled: Boolean(threadId) && finished.length > 0 && tracing === true,
    staleTime: Infinity,
    queryFn: async () => {
      const out: TraceFacts = { durations: {}, subagents: {}, settled: true };
      const visit = (node: Tree) => {
        if (node.run_type === 'tool') {
          const id = toolCallIdIn(node.outputs);
          if (id && node.latency_ms !== null) out.durations[id] = node.latency_ms;
          // A subagent runs inside its `task` call as a chain whose outputs are its state.
          const messages = node.name === 'task' ? node.child_runs.map((c) => (c.outputs as { messages?: unknown } | null)?.messages).find(Array.isArray) : undefined;
          if (id && messages) out.subagents[id] = messages as TracedMessage[];
        }
        node.child_runs.forEach(visit);
      };
      await Promise.all(
        finished.map(async (runId) => {
          const res = await api.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId!, run_id: runId } } });
          if (res.data) visit(res.data); // a run without a trace (tracing off) has no durations
        }),
      );
      return out;
    },
  });
  return query.data ?? (finished.length === 0 || !threadId || tracing === false ? NO_FACTS : UNSETTLED);
}
const NO_FACTS: TraceFacts = { durations: {}, subagents: {}, settled: true };
const UNSETTLED: TraceFacts = { ...NO_FACTS, settled: false };

/** Whether the stream itself shows a `task` call's subagent at work (it did, or does, stream it). */
function shownLive(stream: Stream, toolCallId: string): boolean {
  const sub = stream.getSubagent(toolCallId);
  return !!sub && (sub.messages.length > 0 || sub.toolCalls.length > 0);
}

/** What the runs' event logs tell of subagents' steps: each `task` call's subagent's messages, by call id. */
interface LoggedSubagents {
  subagents: Record<string, TracedMessage[]>;
  /** Whether the logs of the calls asked about have been read. */
  settled: boolean;
}

/**
 * The steps of the subagents of `taskCallIds`, from the event logs Hangar keeps of a thread's ended
 * runs (`HANGAR_RUN_EVENT_RETENTION_DAYS`), whether tracing is on or not: each run's stream is
 * replayed (its `values` events only), newest run first, until every call is found. A subagent's
 * last `values|tools:<task>` state holds its messages, its question first; that question is the
 * description of the `task` call that started it (as useStream matches them while streaming). A run
 * streamed without its subagents' events (`stream_subgraphs` off) has none to give.
 */
function useLoggedSubagents(stream: Stream, threadId: string | null, runs: { run_id: string; status: string }[] | undefined, taskCallIds: string[]): LoggedSubagents {
  const finished = (runs ?? []).filter((r) => r.status !== 'pending' && r.status !== 'running').map((r) => r.run_id);
  const wanted = [...taskCallIds].sort().join(',');
  const lg = stream.client;
  const query = useQuery({
    queryKey: ['logged-subagents', threadId, finished.join(','), wanted],
    enabled: Boolean(threadId) && finished.length > 0 && wanted.length > 0,
    staleTime: Infinity,
    queryFn: async ({ signal }) => {
      const found: Record<string, TracedMessage[]> = {};
      const missing = new Set(taskCallIds);
      for (const runId of finished) {
        if (missing.size === 0) break;
        let main: TracedMessage[] = [];
        const subagents = new Map<string, TracedMessage[]>();
        try {
          for await (const part of lg.runs.joinStream(threadId!, runId, { signal, lastEventId: '-1', streamMode: 'values' })) {
            const messages = (part.data as { messages?: unknown } | null)?.messages;
            if (!Array.isArray(messages)) continue;
            const [mode, ...namespace] = String(part.event).split('|');
            if (mode !== 'values') continue;
            if (namespace.length === 0) main = messages as TracedMessage[];
            else if (namespace.length === 1 && namespace[0]!.startsWith('tools:')) subagents.set(namespace[0]!, messages as TracedMessage[]);
          }
        } catch {
          continue; // a run whose log cannot be read shows no steps
        }
        const calls = main.flatMap((m) => (m.type === 'ai' ? (m.tool_calls ?? []) : [])).filter((c) => c.name === 'task' && c.id && missing.has(c.id));
        for (const messages of subagents.values()) {
          const asked = messages[0]?.type === 'human' ? text(messages[0].content ?? '') : null;
          const call = calls.find((c) => missing.has(c.id!) && asked !== null && c.args?.description === asked);
          if (!call) continue;
          found[call.id!] = messages;
          missing.delete(call.id!);
        }
      }
      return { subagents: found, settled: true };
    },
  });
  return query.data ?? (wanted.length === 0 ? NO_LOGS : { subagents: {}, settled: false });
}
const NO_LOGS: LoggedSubagents = { subagents: {}, settled: true };

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function MessageView({ message: m, stream, traced, logged }: { message: Message; stream: Stream; traced: TraceFacts; logged: LoggedSubagents }) {
  const { durations } = traced;
  if (m.type === 'tool') return null; // shown inside the tool-call card of the AI message that asked
  const who = m.type === 'human' ? 'You' : m.type === 'ai' ? 'Agent' : m.type;
  const calls = m.type === 'ai' ? stream.getToolCalls(m) : [];
  const body = text(m.content);
  return (
    <div aria-label={`${who} message`}>
      <Text size="xs" c="dimmed" fw={600}>
        {who}
      </Text>
      {body && m.type === 'human' ? (
        // What the person typed, as typed: markdown would join its lines into one paragraph.
        <Text style={{ whiteSpace: 'pre-wrap' }} className="wrap-anywhere">
          {body}
        </Text>
      ) : (
        body && (
          <div className="markdown-preview">
            <Suspense fallback={<Text style={{ whiteSpace: 'pre-wrap' }}>{body}</Text>}>
              <Markdown>{body}</Markdown>
            </Suspense>
          </div>
        )
      )}
      {calls.map((c) => {
        const sub = c.call.name === 'task' && c.call.id ? stream.getSubagent(c.call.id) : undefined;
        return (
          <Card withBorder key={c.call.id ?? c.call.name} p="xs" mt={4} aria-label={`Tool call ${c.call.name}`}>
            <Group gap="xs">
              <Text size="sm" fw={600} ff="monospace">
                {c.call.name}
              </Text>
              <Badge size="xs" color={c.state === 'error' ? 'red' : c.state === 'completed' ? 'green' : 'gray'}>
                {c.state}
              </Badge>
              {c.call.id && durations[c.call.id] !== undefined && (
                <Text size="xs" c="dimmed" aria-label={`Duration of ${c.call.name}`}>
                  {formatMs(durations[c.call.id]!)}
                </Text>
              )}
            </Group>
            <Code block className="wrap-anywhere">
              {JSON.stringify(c.call.args, null, 2)}
            </Code>
            {c.result && (
              <>
                <Text size="xs" c="dimmed" mt={4}>
                  Result
                </Text>
                <Code block className="wrap-anywhere">
                  {text(c.result.content)}
                </Code>
              </>
            )}
            {sub && (sub.messages.length > 0 || sub.toolCalls.length > 0) ? (
              <Paper withBorder p="xs" mt={4} aria-label={`Subagent ${String(sub.toolCall.args.subagent_type ?? '')}`}>
                <Text size="xs" fw={600}>
                  Subagent {String(sub.toolCall.args.subagent_type ?? '')} · {sub.status}
                </Text>
                {sub.messages.filter((sm) => text(sm.content)).map((sm, j) => (
                  <Text size="sm" key={sm.id ?? j} className="wrap-anywhere">
                    {sm.type === 'ai' ? '› ' : ''}
                    {text(sm.content)}
                  </Text>
                ))}
                {sub.toolCalls.map((sc) => (
                  <Text size="sm" ff="monospace" key={sc.id} className="wrap-anywhere" aria-label={`Subagent tool call ${sc.call.name}`}>
                    {sc.call.name} {JSON.stringify(sc.call.args)} · {sc.state}
                  </Text>
                ))}
                {sub.result && (
                  <Text size="sm" className="wrap-anywhere">
                    {sub.result}
                  </Text>
                )}
              </Paper>
            ) : (
              c.call.name === 'task' && (
                <SubagentSummary args={c.call.args} status={sub?.status ?? c.state} answer={c.result ? text(c.result.content) : (sub?.result ?? null)} {...stepsOf(c.call.id, traced, logged)} />
              )
            )}
          </Card>
        );
      })}
    </div>
  );
}

/** Where a `task` call's subagent's steps come from, once known: its run's trace, else its run's event log. */
function stepsOf(id: string | undefined, traced: TraceFacts, logged: LoggedSubagents): { steps: TracedMessage[] | undefined; source: 'trace' | 'log' | null } {
  if (id && traced.subagents[id]) return { steps: traced.subagents[id], source: 'trace' };
  if (id && logged.subagents[id]) return { steps: logged.subagents[id], source: 'log' };
  return { steps: undefined, source: traced.settled && logged.settled ? null : 'trace' };
}

/**
 * A subagent whose own messages are not in the stream: after a reload, Hangar keeps no step of a run
 * but its last (one checkpoint per run), so useStream cannot rebuild a subagent's conversation. What
 * it was asked (its `task` call's description) and what it answered (the call's result) are in the
 * parent's messages; its own steps (`steps`) come from the run's trace once the run has ended, else
 * (tracing off) from the run's event log. A run that kept neither says so.
 */
function SubagentSummary({ args, status, answer, steps, source }: { args: Record<string, unknown>; status: string; answer: string | null; steps: TracedMessage[] | undefined; source: 'trace' | 'log' | null }) {
  const type = String(args.subagent_type ?? '');
  const asked = typeof args.description === 'string' ? args.description : JSON.stringify(args);
  // Its question is "Asked" and its last word "Answered": the steps are what came between.
  const between = (steps ?? []).slice(1).filter((sm, i, all) => !(i === all.length - 1 && sm.type === 'ai' && !sm.tool_calls?.length && answer !== null && text(sm.content ?? '') === answer));
  const resultOf = (id: string | undefined) => (steps ?? []).find((sm) => sm.type === 'tool' && id && sm.tool_call_id === id);
  return (
    <Paper withBorder p="xs" mt={4} aria-label={`Subagent ${type}`}>
      <Text size="xs" fw={600}>
        Subagent {type} · {status}
      </Text>
      <Labelled label="Asked" text={asked} />
      {steps && between.length > 0 && (
        <div aria-label="Steps">
          <Text size="xs" c="dimmed">
            Steps
          </Text>
          {between.map((sm, j) =>
            sm.type === 'ai' ? (
              <div key={sm.id ?? j}>
                {text(sm.content ?? '') && (
                  <Text size="sm" className="wrap-anywhere" style={{ whiteSpace: 'pre-wrap' }}>
                    › {text(sm.content ?? '')}
                  </Text>
                )}
                {(sm.tool_calls ?? []).map((call, k) => {
                  const result = resultOf(call.id);
                  const state = !result ? 'pending' : result.status === 'error' ? 'error' : 'completed';
                  return (
                    <Text size="sm" ff="monospace" key={call.id ?? k} className="wrap-anywhere" aria-label={`Subagent tool call ${call.name}`}>
                      {call.name} {JSON.stringify(call.args ?? {})} · {state}
                    </Text>
                  );
                })}
              </div>
            ) : null,
          )}
        </div>
      )}
      {answer !== null && <Labelled label="Answered" text={answer} />}
      <Text size="xs" c="dimmed" mt={4}>
        {!steps
          ? source === null
            ? "Its own steps were not kept: the run has no trace (tracing is off) and its event log holds none of its subagents' events."
            : 'Reading its steps…'
          : `${between.length > 0 ? 'Its steps are read from' : 'It answered with no other step (read from'} the run's ${source === 'log' ? 'event log' : 'trace'}${between.length > 0 ? '.' : ').'}`}
      </Text>
    </Paper>
  );
}

/** A labelled block of text (a subagent's question or answer), its label also its accessible name. */
function Labelled({ label, text }: { label: string; text: string }) {
  return (
    <div aria-label={label}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" className="wrap-anywhere" style={{ whiteSpace: 'pre-wrap' }}>
        {text}
      </Text>
    </div>
  );
}

const decisionLabel: Record<Decision['type'], string> = { approve: 'approve', edit: 'run with edited arguments', reject: 'reject', respond: 'respond' };

function ApprovalCard({
  request,
  config,
  count,
  answered,
  decided,
  onDecide,
  onChange,
  disabled,
}: {
  request: ActionRequest;
  config: ReviewConfig | undefined;
  /** How many calls wait for a decision, and how many have one. */
  count: number;
  answered: number;
  /** This call's decision, while the others still wait for theirs. */
  decided: Decision | undefined;
  onDecide: (d: Decision) => void;
  onChange: () => void;
  disabled: boolean;
}) {
  const allowed = new Set(config?.allowed_decisions ?? ['approve', 'edit', 'reject', 'respond']);
  const [mode, setMode] = useState<'edit' | 'respond' | 'reject' | null>(null);
  const [args, setArgs] = useState(() => JSON.stringify(request.args, null, 2));
  const [message, setMessage] = useState('');
  const parsed = useMemo(() => {
    try {
      const v: unknown = JSON.parse(args);
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }, [args]);
  // A new request closes the editor; the same request re-read from the stream (a new object) does not.
  const requestKey = JSON.stringify(request);
  useEffect(() => setMode(null), [requestKey]);
  const decide = (d: Decision) => {
    setMode(null);
    onDecide(d);
  };
  return (
    <Card withBorder p="sm" style={{ borderColor: 'var(--mantine-color-orange-5)' }} aria-label={`Approval needed: ${request.name}`}>
      <Stack gap="xs">
        <Text fw={600}>
          Approve call to <Code>{request.name}</Code>?
        </Text>
        {request.description && (
          <Text size="sm" className="wrap-anywhere">
            {request.description}
          </Text>
        )}
        <Code block className="wrap-anywhere">
          {JSON.stringify(request.args, null, 2)}
        </Code>
        {mode === 'edit' && <JsonInput label="Arguments" value={args} onChange={setArgs} autosize minRows={3} validationError="Not a JSON object" formatOnBlur />}
        {(mode === 'respond' || mode === 'reject') && (
          <Textarea label={mode === 'respond' ? 'Response to the agent' : 'Reason (optional)'} value={message} onChange={(e) => setMessage(e.currentTarget.value)} autosize />
        )}
        {decided && count > 1 && (
          <Group gap="xs" role="status">
            <Text size="sm">
              Your decision: <b>{decisionLabel[decided.type]}</b>. Sent once every call has one ({answered} of {count}).
            </Text>
            <Button size="compact-sm" variant="subtle" onClick={onChange}>
              Change
            </Button>
          </Group>
        )}
        <Group gap="xs">
          {mode === null && !decided && (
            <>
              {allowed.has('approve') && (
                <Button onClick={() => decide({ type: 'approve' })} disabled={disabled}>
                  Approve
                </Button>
              )}
              {allowed.has('edit') && (
                <Button variant="default" onClick={() => setMode('edit')} disabled={disabled}>
                  Edit
                </Button>
              )}
              {allowed.has('reject') && (
                <Button variant="light" color="red" onClick={() => setMode('reject')} disabled={disabled}>
                  Reject
                </Button>
              )}
              {allowed.has('respond') && (
                <Button variant="default" onClick={() => setMode('respond')} disabled={disabled}>
                  Respond
                </Button>
              )}
            </>
          )}
          {mode === 'edit' && (
            <Button onClick={() => parsed && decide({ type: 'edit', edited_action: { name: request.name, args: parsed } })} disabled={!parsed}>
              Run with these arguments
            </Button>
          )}
          {mode === 'reject' && (
            <Button color="red" onClick={() => decide(message.trim() ? { type: 'reject', message: message.trim() } : { type: 'reject' })}>
              Reject call
            </Button>
          )}
          {mode === 'respond' && (
            <Button onClick={() => decide({ type: 'respond', message })} disabled={!message.trim()}>
              Send response
            </Button>
          )}
          {mode !== null && (
            <Button variant="subtle" onClick={() => setMode(null)}>
              Back
            </Button>
          )}
        </Group>
      </Stack>
    </Card>
  );
}
