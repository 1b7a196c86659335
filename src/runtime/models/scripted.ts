// The built-in `scripted` chat model: an offline, deterministic model for tests, demos and benchmarks.
// It is a real LangChain chat model (tools bind, tokens stream, usage is reported), so every part of
// the runtime that a provider model exercises is exercised by it too.
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, type BaseChatModelCallOptions, type BaseChatModelParams, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { AIMessage, AIMessageChunk, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import { createHash } from 'node:crypto';

/** Options of a scripted model. */
export interface ScriptedChatModelParams extends BaseChatModelParams {
  /** The `<name>` of `scripted:<name>`; reported as the model name. */
  model?: string;
  /** Pause before each streamed token, in milliseconds (a saved model configuration can set it). */
  delayMs?: number;
}

/** One tool call requested by a `/call TOOL {json}` line. */
export interface ScriptedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** What the scripted model answers to a conversation: text, or tool calls. */
export type ScriptedReply = { kind: 'text'; text: string } | { kind: 'calls'; calls: ScriptedCall[] };

const CALL_LINE = /^\/call\s+(\S+)\s*(.*)$/;

/**
 * The `/call` lines of a human message, as tool calls with ids `call_<prefix>_1`, `call_<prefix>_2`, …
 * The prefix tells the human message apart from the thread's others (see `callIdPrefix`): clients
 * (the Console, LangGraph's) match tool results to calls by id across a whole thread, as real
 * providers' ids allow.
 */
export function parseCalls(text: string, prefix: string): ScriptedCall[] {
  const calls: ScriptedCall[] = [];
  for (const line of text.split('\n')) {
    const match = CALL_LINE.exec(line.trim());
    if (!match) continue;
    const raw = match[2]!.trim();
    let args: Record<string, unknown> = {};
    if (raw !== '') {
      try {
        const parsed: unknown = JSON.parse(raw);
        args = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { input: parsed };
      } catch {
        // Not JSON: hand the raw text over so the tool (and the test author) sees what was written.
        args = { input: raw };
      }
    }
    calls.push({ id: `call_${prefix}_${calls.length + 1}`, name: match[1]!, args });
  }
  return calls;
}

/**
 * The tool-call id prefix of the human message at `position` of a conversation: 12 hex digits of a
 * hash of its id (LangGraph gives every message of a thread its own), or of its position and text
 * when it has none. Deterministic, so the reply after the tool results finds them by the same ids,
 * and replaying a conversation gives the same ids.
 */
export function callIdPrefix(message: BaseMessage, position: number): string {
  const key = message.id ? `id:${message.id}` : `at:${position}:${textOf(message)}`;
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** Decide the reply to `messages` (the rules of the `scripted` provider; see docs/runtime.md). */
export function scriptedReply(messages: BaseMessage[]): ScriptedReply {
  let humanAt = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.getType() === 'human') {
      humanAt = i;
      break;
    }
  }
  if (humanAt < 0) return { kind: 'text', text: 'You said: ' };
  const text = textOf(messages[humanAt]!);
  const calls = parseCalls(text, callIdPrefix(messages[humanAt]!, humanAt));
  if (calls.length === 0) return { kind: 'text', text: `You said: ${text}` };

  const after = messages.slice(humanAt + 1);
  const asked = after.some((m) => m.getType() === 'ai' && ((m as AIMessage).tool_calls?.length ?? 0) > 0);
  if (!asked) return { kind: 'calls', calls };
  const results = new Map<string, string>();
  for (const m of after) {
    if (m.getType() === 'tool') results.set((m as ToolMessage).tool_call_id, textOf(m));
  }
  const lines = calls.map((c) => `${c.name}: ${results.get(c.id) ?? '(no result)'}`);
  return { kind: 'text', text: ['Done.', ...lines].join('\n') };
}

/** The text of a message, whether its content is a string or content blocks. */
export function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  return content
    .map((block) => (typeof block === 'string' ? block : block.type === 'text' && typeof block.text === 'string' ? block.text : ''))
    .join('');
}

/** Words in `text`: the scripted model's unit of tokens. */
export function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

/** Split `text` into word tokens that concatenate back to it exactly (whitespace stays attached). */
export function wordTokens(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
}

interface ScriptedCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

/** A LangChain chat model that follows the `scripted` rules, streaming word by word. */
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions, AIMessageChunk> {
  readonly model: string;
  readonly delayMs: number;

  static override lc_name(): string {
    return 'ScriptedChatModel';
  }

  constructor(params: ScriptedChatModelParams = {}) {
    super(params);
    this.model = params.model ?? 'scripted';
    this.delayMs = Math.max(0, params.delayMs ?? 0);
  }

  _llmType(): string {
    return 'scripted';
  }

  override getLsParams(options: this['ParsedCallOptions']) {
    return { ...super.getLsParams(options), ls_provider: 'scripted', ls_model_name: this.model, ls_model_type: 'chat' as const };
  }

  /** Tools are accepted as any provider accepts them; the script, not the schema, decides the calls. */
  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ScriptedCallOptions>): Runnable<BaseLanguageModelInput, AIMessageChunk, ScriptedCallOptions> {
    return this.withConfig({ ...kwargs, tools } as Partial<ScriptedCallOptions>);
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const reply = scriptedReply(messages);
    const inputTokens = messages.reduce((n, m) => n + countWords(textOf(m)), 0);
    const id = `run-scripted-${crypto.randomUUID()}`;
    const meta = { model_name: this.model, model_provider: 'scripted' };
    if (reply.kind === 'calls') {
      await this.pause(options.signal);
      const outputTokens = reply.calls.reduce((n, c) => n + 1 + countWords(JSON.stringify(c.args)), 0);
      const chunk = new AIMessageChunk({
        id,
        content: '',
        tool_call_chunks: reply.calls.map((c, index) => ({ type: 'tool_call_chunk', id: c.id, name: c.name, args: JSON.stringify(c.args), index })),
        usage_metadata: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
        response_metadata: { ...meta, finish_reason: 'tool_calls' },
      });
      yield new ChatGenerationChunk({ message: chunk, text: '' });
      return;
    }
    const tokens = wordTokens(reply.text);
    const outputTokens = countWords(reply.text);
    for (let i = 0; i < tokens.length; i++) {
      await this.pause(options.signal);
      const last = i === tokens.length - 1;
      const chunk = new AIMessageChunk({
        id,
        content: tokens[i]!,
        ...(last
          ? {
              usage_metadata: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
              response_metadata: { ...meta, finish_reason: 'stop' },
            }
          : {}),
      });
      yield new ChatGenerationChunk({ message: chunk, text: tokens[i]! });
      await runManager?.handleLLMNewToken(tokens[i]!, undefined, undefined, undefined, undefined, { chunk: new ChatGenerationChunk({ message: chunk, text: tokens[i]! }) });
    }
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let merged: AIMessageChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      merged = merged ? merged.concat(chunk.message as AIMessageChunk) : (chunk.message as AIMessageChunk);
    }
    const m = merged ?? new AIMessageChunk({ content: '' });
    const message = new AIMessage({
      id: m.id,
      content: m.content,
      tool_calls: m.tool_calls ?? [],
      ...(m.usage_metadata ? { usage_metadata: m.usage_metadata } : {}),
      response_metadata: m.response_metadata,
    });
    return { generations: [{ message, text: typeof m.content === 'string' ? m.content : '' }] };
  }

  private async pause(signal: AbortSignal | undefined): Promise<void> {
    if (this.delayMs <= 0) return;
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
    await new Promise<void>((resolve, reject) => {
      // One listener per pause, removed when the pause ends: a long stream must not pile them up, and
      // LangChain hands models composite signals (AbortSignal.any), which Node 20 keeps, with everything
      // their listeners hold, while a listener is attached and no source aborted: for a finished run,
      // forever (bench:load kept every run in memory).
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, this.delayMs);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
