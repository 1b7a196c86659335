// One run request, two wire forms: the hosted form (`agent_id`, `messages` or `input.messages`,
// `command.resume.decisions`) and LangGraph's (`assistant_id`, `input`, `command`, `stream_mode`,
// `interrupt_before`, `config`, …). Both become the same StartRunInput here, at the edge.
import { z } from '@hono/zod-openapi';
import { HangarError, invalid, invalidField, type FieldIssue } from '../../core/errors.js';
import type { Caller } from '../../core/caller.js';
import { MULTITASK_STRATEGIES, type StartRunInput } from '../../core/runs/service.js';
import type { Services } from '../../core/services.js';
import type { Run } from '../../core/threads/service.js';
import { DECISION_TYPES } from '../../runtime/agent/approvals.js';
import { isTimeZone } from '../../runtime/agent/clock.js';
import { STREAM_MODES, type StreamMode } from '../../runtime/events/types.js';
import { MESSAGE_ROLES, type RunMessage } from '../../runtime/run-input.js';
import { resolveAssistant } from './assistants.js';

/** LangGraph stream modes Hangar does not serve, and what to use instead. */
const REFUSED_MODES: Record<string, string> = {
  messages: 'use messages-tuple (token chunks as [message, metadata])',
  events: 'LangChain callback events are not streamed; use messages-tuple and updates',
  debug: 'debug events (tasks and checkpoints, wrapped) are not streamed; use tasks, updates and values (useStream asks for it when given onDebugEvent)',
  checkpoints: 'checkpoint events are not streamed: with the default durability a run keeps one checkpoint, at its end; read it (and the history) with POST /threads/{thread_id}/history once the run ends (useStream asks for this mode when given onCheckpointEvent)',
  tools: 'tool progress events are not streamed; tool calls and results arrive in messages-tuple and updates',
};

/** LangChain message types → roles. */
const TYPE_ROLES: Record<string, RunMessage['role']> = { human: 'user', user: 'user', ai: 'assistant', assistant: 'assistant', system: 'system', tool: 'tool' };

const InputMessage = z
  .object({
    role: z.enum(MESSAGE_ROLES).optional().openapi({ description: '`user`, `assistant` or `system` (`tool` is a 422: it would answer no tool call).' }),
    type: z.enum(['human', 'user', 'ai', 'assistant', 'system', 'tool']).optional().openapi({ description: 'LangChain’s form of `role` (`human`, `ai`, …).' }),
    content: z
      .union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).catchall(z.unknown()))])
      .openapi({ description: 'Text, or content blocks of which only `text` blocks are accepted.' }),
    id: z.string().optional(),
    tool_calls: z.array(z.unknown()).optional().openapi({ description: 'Refused when not empty (422): the tool results could not follow.' }),
  })
  .catchall(z.unknown())
  .openapi('InputMessage');

const Decision = z
  .object({
    type: z.enum(DECISION_TYPES).openapi({
      description:
        '`approve` runs the tool as requested; `edit` runs it with `edited_action`; `reject` blocks it (the model gets an error result, with `message` if given); `respond` skips it (the model gets `message` as the tool’s successful result).',
    }),
    edited_action: z
      .object({ name: z.string().optional(), args: z.record(z.string(), z.unknown()) })
      .optional()
      .openapi({ description: 'For `edit`: the arguments to run the tool with (and optionally another tool name: one the agent or its subagents have, else 422). LangChain’s `editedAction` is accepted too.' }),
    editedAction: z.object({ name: z.string().optional(), args: z.record(z.string(), z.unknown()) }).optional(),
    message: z.string().optional().openapi({ description: 'For `reject`: why (optional). For `respond`: the answer the model gets.' }),
  })
  .openapi('Decision');

const interruptNodes = z.union([z.literal('*'), z.array(z.string())]);

/** The body of `POST /threads/{thread_id}/runs/stream`, `/runs` and `/runs/wait`, in either form. */
export const RunRequest = z
  .object({
    agent_id: z.uuid({ message: 'must be a UUID' }).optional().openapi({ description: 'The thread’s agent. Required unless `assistant_id` is sent.' }),
    assistant_id: z.string().min(1).optional().openapi({ description: 'LangGraph: the agent, by id or by name (an agent is an assistant).' }),
    messages: z.array(InputMessage).optional().openapi({
      description: 'Input messages, appended to the thread’s conversation. Required unless `input.messages` or `command` is sent; ignored when resuming (a placeholder is fine).',
    }),
    input: z
      .object({ messages: z.array(InputMessage).optional() })
      .catchall(z.unknown())
      .nullable()
      .optional()
      .openapi({
        description:
          '`{messages}`: the hosted form of `messages` (sending both, different, is a 422). LangGraph: `null` continues from the thread’s checkpoint (after a breakpoint); on a thread with no checkpoint yet it is a 422. Other state keys are refused (write them with `POST /threads/{thread_id}/state`).',
      }),
    command: z
      .object({
        resume: z.unknown().optional().openapi({ description: '`{decisions: [...]}`: one decision per pending action request, in order (or keyed by interrupt id). When several approval requests are pending at once (parallel subagents), key each by its interrupt id: `{<id>: {decisions: [...]}, ...}`; a single list is a 422.' }),
        goto: z.union([z.string(), z.array(z.string())]).optional().openapi({ description: 'LangGraph: node(s) to run next.' }),
        update: z.record(z.string(), z.unknown()).optional().openapi({ description: 'LangGraph: state to write before continuing.' }),
      })
      .nullable()
      .optional()
      .openapi({ description: 'Resume the thread’s pending interrupt (the thread must be `interrupted`), or steer it with `goto` / `update`.' }),
    multitask_strategy: z.enum(MULTITASK_STRATEGIES).optional().openapi({
      description:
        'When the thread already has an active run: `reject` (default, 409), `enqueue` (run after it), `interrupt` (cancel it, then run), `rollback` (cancel and delete it, then run).',
    }),
    on_disconnect: z.enum(['cancel', 'continue']).optional().openapi({
      description: '`cancel`: cancel the run when this stream’s client goes away. Default `continue` (the run goes on; rejoin its stream).',
    }),
    stream_mode: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .openapi({
        description:
          'Any of `values`, `updates`, `messages-tuple` (event name `messages`), `custom` (what tools write as they work: a sandbox command’s output as it comes, `{sandbox_output: {command, text}}`), `tasks` (LangGraph’s task events: each task as it starts, `{id, name, input, triggers}`, and its result, `{id, name, result, error, interrupts}`). Default `["values"]`. LangGraph’s `messages`, `events`, `debug`, `checkpoints` and `tools` are refused with a 422 that says what to use instead.',
      }),
    stream_subgraphs: z.boolean().optional().openapi({ description: 'Also stream subagents’ events, named `<mode>|<namespace>`. Default false.' }),
    user_timezone: z.string().optional().openapi({
      description: 'IANA zone; the local date and time there go into the system prompt. UTC when absent; a name that is not an IANA zone is a 422.',
      example: 'Europe/Paris',
    }),
    after_seconds: z.number().optional().openapi({ description: 'LangGraph: delayed runs are not supported; a value above 0 is a 422 (schedule the run instead).' }),
    interrupt_before: interruptNodes.optional().openapi({ description: 'LangGraph: pause before these nodes (`*`: all).' }),
    interrupt_after: interruptNodes.optional().openapi({ description: 'LangGraph: pause after these nodes (`*`: all).' }),
    metadata: z.record(z.string(), z.unknown()).optional().openapi({ description: 'Your own metadata of the run (kept in the run’s `metadata`).' }),
    config: z
      .object({
        configurable: z.record(z.string(), z.unknown()).optional(),
        recursion_limit: z.number().int().min(1).optional(),
      })
      .catchall(z.unknown())
      .nullable()
      .optional()
      .openapi({
        description:
          'LangGraph: `configurable.user_timezone` is read; `recursion_limit` bounds the graph steps of the run (at most the server’s `HANGAR_RECURSION_LIMIT`; more steps fail the run: `run_failed`, `GraphRecursionError`); other keys are accepted and ignored (the agent is configured by its files).',
      }),
    context: z.unknown().optional().openapi({ description: 'LangGraph: accepted and ignored (the agent is configured by its files).' }),
    if_not_exists: z.enum(['create', 'reject']).optional().openapi({ description: 'LangGraph: `create` makes the thread (with this id) when it does not exist. Default `reject` (404).' }),
    checkpoint: z
      .object({
        checkpoint_id: z.string().min(1).max(100).nullish(),
        checkpoint_ns: z.string().nullish(),
        checkpoint_map: z.unknown().optional(),
        thread_id: z.string().nullish(),
      })
      .nullable()
      .optional()
      .openapi({
        description:
          'LangGraph: run from this past checkpoint of the thread (`{checkpoint_id}`, as a history state’s `checkpoint` or `parent_checkpoint`): the thread forks there (edit a message, regenerate an answer). Its `checkpoint_ns` must be `""`; a checkpoint the thread does not have is a 404 (`checkpoint_not_found`).',
      }),
    checkpoint_id: z.string().min(1).max(100).nullish().openapi({ description: 'LangGraph: as `checkpoint.checkpoint_id`.' }),
    webhook: z
      .url({ protocol: /^https?$/, message: 'must be an absolute http:// or https:// URL' })
      .max(2048)
      .optional()
      .openapi({ description: 'Receives a signed POST when the run ends (see the Webhooks tag); its deliveries are listed at `…/runs/{run_id}/webhooks`.' }),
  })
  .openapi('StreamRunRequest');

/** A run request as sent. */
export type RunRequestBody = z.infer<typeof RunRequest>;

/**
 * The run to start for `body` on `threadId`, or a 422 naming every problem. Nothing is written here
 * (only `if_not_exists: "create"` creates the thread, once the request is known to be good).
 */
export async function startRunInput(services: Services, caller: Caller, threadId: string, body: RunRequestBody): Promise<StartRunInput> {
  const issues: FieldIssue[] = [];
  const issue = (loc: (string | number)[], msg: string) => issues.push({ loc: ['body', ...loc], msg, type: 'value_error' });
  const checkpointId = body.checkpoint?.checkpoint_id ?? body.checkpoint_id ?? undefined;
  if (body.checkpoint?.checkpoint_ns) issue(['checkpoint', 'checkpoint_ns'], 'Hangar keeps no checkpoints of subgraphs (subagents run inside the `task` tool); only "" is served');
  if (body.checkpoint?.thread_id && body.checkpoint.thread_id !== threadId) issue(['checkpoint', 'thread_id'], `names another thread than ${threadId}; a run forks its own thread`);
  if (body.checkpoint?.checkpoint_id && body.checkpoint_id && body.checkpoint.checkpoint_id !== body.checkpoint_id) {
    issue(['checkpoint_id'], 'differs from checkpoint.checkpoint_id; send one of them');
  }
  if (checkpointId !== undefined && body.command) issue(['command'], 'a command cannot be sent with `checkpoint`: a pending interrupt is answered at the thread’s latest state');

  const topLevel = body.messages === undefined ? undefined : toRunMessages(body.messages, ['messages'], issue);
  const { messages: inputMessages, ...otherInput } = body.input ?? {};
  const nested = inputMessages === undefined ? undefined : toRunMessages(inputMessages, ['input', 'messages'], issue);
  for (const key of Object.keys(otherInput)) issue(['input', key], 'only `messages` can be sent as input; write other state with POST /threads/{thread_id}/state');
  if (topLevel && nested && JSON.stringify(topLevel) !== JSON.stringify(nested)) {
    issue(['messages'], 'both `messages` and `input.messages` were sent and they differ; send one of them');
  }
  const messages = topLevel ?? nested ?? [];
  const command = body.command ?? undefined;
  if (command) {
    const goto = command.goto === undefined ? [] : typeof command.goto === 'string' ? [command.goto] : command.goto;
    const update = command.update ?? {};
    if (command.resume === undefined && goto.length === 0 && Object.keys(update).length === 0) {
      issue(['command'], 'has nothing to do: send `resume` (the answer to a pending interrupt), `goto` or a non-empty `update`');
    }
  }
  if (body.after_seconds !== undefined && body.after_seconds > 0) {
    issue(['after_seconds'], 'delayed runs are not supported: the run would start at once; leave it out (or 0), or create a schedule');
  }
  const zone = body.user_timezone ?? body.config?.configurable?.user_timezone;
  if (zone !== undefined && zone !== null && !isTimeZone(zone)) {
    issue(body.user_timezone !== undefined ? ['user_timezone'] : ['config', 'configurable', 'user_timezone'], `${JSON.stringify(zone)} is not an IANA time zone name (e.g. Europe/Paris)`);
  }
  const continues = body.input === null && !command;
  if (!command && !continues && messages.length === 0) issue(['messages'], 'must contain at least one message (or send `input.messages`)');

  const sentModes = typeof body.stream_mode === 'string' ? [body.stream_mode] : (body.stream_mode ?? []);
  sentModes.forEach((mode, i) => {
    const at = typeof body.stream_mode === 'string' ? ['stream_mode'] : ['stream_mode', i];
    if (REFUSED_MODES[mode]) issue(at, `stream mode "${mode}" is not served: ${REFUSED_MODES[mode]}`);
    else if (!(STREAM_MODES as readonly string[]).includes(mode)) issue(at, `unknown stream mode "${mode}"; served: ${STREAM_MODES.join(', ')}`);
  });
  const modes = [...new Set(sentModes)];
  const decisions = (body.command?.resume as { decisions?: unknown } | undefined)?.decisions;
  if (Array.isArray(decisions)) {
    decisions.forEach((d, i) => {
      const parsed = Decision.safeParse(d);
      if (!parsed.success) for (const e of parsed.error.issues) issue(['command', 'resume', 'decisions', i, ...e.path.map(String)], e.message);
    });
  } else if (decisions !== undefined) issue(['command', 'resume', 'decisions'], 'must be a list: one decision per pending action request');
  if (body.agent_id === undefined && body.assistant_id === undefined) issue(['agent_id'], 'required: the agent to run (`agent_id`, or LangGraph’s `assistant_id`)');
  if (issues.length > 0) throw invalid(issues);

  const agentId = body.agent_id ?? (await resolveAssistant(services, caller, body.assistant_id!, ['assistant_id']));
  if (body.agent_id !== undefined && body.assistant_id !== undefined && body.assistant_id !== body.agent_id) {
    const named = await resolveAssistant(services, caller, body.assistant_id, ['assistant_id']);
    if (named !== body.agent_id) throw invalidField(['assistant_id'], `names another agent (${named}) than agent_id (${body.agent_id}); send one of them`);
  }
  if (checkpointId !== undefined) {
    // A fork starts from a checkpoint the thread has (404 otherwise); `input: null` there runs what
    // that checkpoint had next, so one at rest would do nothing.
    const state = await services.threads.stateAt(caller, threadId, checkpointId);
    if (continues && state.next.length === 0) {
      throw invalidField(
        ['input'],
        `null runs what checkpoint ${checkpointId} had next, and it has nothing next (Hangar keeps one checkpoint per run, at its end): to regenerate an answer, send its question again as input from the checkpoint before it`,
      );
    }
  } else if (continues) {
    // `input: null` goes on from the thread's latest checkpoint: a thread with none would start a
    // run that fails at once ("no input"), and bind the thread to this agent on the way.
    const state = await services.threads.currentState(caller, threadId).catch((error: unknown) => {
      if (error instanceof HangarError && error.code === 'thread_not_found' && body.if_not_exists === 'create') return undefined;
      throw error;
    });
    if (!state?.checkpoint) throw invalidField(['input'], 'null continues from the thread’s latest checkpoint, and this thread has none yet: send input.messages');
  }
  if (body.if_not_exists === 'create') await services.threads.create(caller, { thread_id: threadId, if_exists: 'do_nothing', agent_id: agentId });
  const timezone = body.user_timezone ?? body.config?.configurable?.user_timezone;
  return {
    agent_id: agentId,
    messages: command || continues ? [] : messages,
    stream_mode: modes.length > 0 ? (modes as StreamMode[]) : ['values'],
    stream_subgraphs: body.stream_subgraphs ?? false,
    user_timezone: typeof timezone === 'string' && isTimeZone(timezone) ? timezone : null,
    on_disconnect: body.on_disconnect ?? 'continue',
    command: command ? { ...command, resume: command.resume === undefined ? undefined : normaliseResume(command.resume) } : undefined,
    multitask_strategy: body.multitask_strategy,
    ...(continues ? { continue: true } : {}),
    ...(checkpointId !== undefined ? { checkpoint_id: checkpointId } : {}),
    ...(body.interrupt_before ? { interrupt_before: body.interrupt_before } : {}),
    ...(body.interrupt_after ? { interrupt_after: body.interrupt_after } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(body.config?.recursion_limit !== undefined ? { recursion_limit: body.config.recursion_limit } : {}),
  };
}

/** Start the run `body` asks for on `threadId`, and register its webhook when it names one. */
export async function startRun(services: Services, caller: Caller, threadId: string, body: RunRequestBody): Promise<Run> {
  if (body.webhook) services.webhooks.check(body.webhook);
  // The webhook is recorded by the statement that records the run: never a run without it.
  return services.runs.start(caller, threadId, { ...(await startRunInput(services, caller, threadId, body)), ...(body.webhook ? { webhook: { url: body.webhook } } : {}) });
}

/** Messages of either form as run messages (role and text). */
function toRunMessages(messages: z.infer<typeof InputMessage>[], at: string[], issue: (loc: (string | number)[], msg: string) => void): RunMessage[] {
  return messages.map((m, i) => {
    const role = m.role ?? (m.type ? TYPE_ROLES[m.type] : undefined);
    if (!role) issue([...at, i], 'needs `role` (or LangChain’s `type`)');
    if (role === 'tool') issue([...at, i], 'a tool message answers a tool call of the model and cannot start a run; answer a pending approval with `command.resume`, or write it with POST /threads/{thread_id}/state');
    // Its tool calls would stay unanswered (a tool message cannot be sent with it), and providers
    // refuse such a history; it was silently dropped before.
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      issue([...at, i, 'tool_calls'], 'a message with tool calls cannot start a run (their results cannot be sent with it); write such history with POST /threads/{thread_id}/state');
    }
    let content = '';
    if (typeof m.content === 'string') content = m.content;
    else {
      const other = m.content.find((b) => b.type !== 'text');
      if (other) issue([...at, i, 'content'], `content blocks of type "${other.type}" are not supported; send text`);
      content = m.content.map((b) => b.text ?? '').join('');
    }
    // A client's message id is kept (LangGraph keeps it), so the client finds its message in the state.
    return { role: role ?? 'user', content, ...(m.id !== undefined ? { id: m.id } : {}) };
  });
}

/**
 * LangChain's camelCase `editedAction` as the wire's `edited_action`, in `{decisions}` and in a
 * resume keyed by interrupt id (`{<id>: {decisions}}`, several requests pending at once).
 */
function normaliseResume(resume: unknown): Record<string, unknown> {
  if (!resume || typeof resume !== 'object' || Array.isArray(resume)) return resume as Record<string, unknown>;
  const withDecisions = (v: unknown): unknown => {
    const r = v as { decisions?: unknown } | null;
    if (!r || typeof r !== 'object' || !Array.isArray(r.decisions)) return v;
    const decisions = r.decisions.map((d) => {
      const parsed = Decision.safeParse(d);
      if (!parsed.success) return d;
      const { editedAction, ...rest } = parsed.data;
      return { ...rest, ...(rest.edited_action || !editedAction ? {} : { edited_action: editedAction }) };
    });
    return { ...r, decisions };
  };
  if (Array.isArray((resume as { decisions?: unknown }).decisions)) return withDecisions(resume) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(resume).map(([id, answer]) => [id, withDecisions(answer)]));
}
