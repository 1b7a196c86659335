// Values on the wire are plain JSON: LangChain messages become dicts (`type`, `content`, `id`,
// `tool_calls`, `usage_metadata`, …), never LangChain's constructor JSON.
import { isBaseMessage, isBaseMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { RESPOND_MARK } from '../agent/respond.js';

/**
 * A message as a plain dict. A token chunk (`asChunk`) keeps its class name as `type`
 * (`AIMessageChunk`); in state and updates a streamed reply is a whole message (`ai`).
 */
export function messageToDict(message: BaseMessage, asChunk = false): Record<string, unknown> {
  const m = message as BaseMessage & Record<string, unknown>;
  const chunk = asChunk && isBaseMessageChunk(message);
  const out: Record<string, unknown> = {
    type: chunk ? message.constructor.name : message.getType(),
    content: toWire(message.content),
    id: message.id ?? null,
    name: message.name ?? null,
    additional_kwargs: toWire(message.additional_kwargs ?? {}),
    response_metadata: toWire(message.response_metadata ?? {}),
  };
  const type = message.getType();
  if (type === 'ai') {
    out.tool_calls = toWire(m.tool_calls ?? []);
    out.invalid_tool_calls = toWire(m.invalid_tool_calls ?? []);
    out.usage_metadata = toWire(m.usage_metadata ?? null);
    if (chunk) out.tool_call_chunks = toWire(m.tool_call_chunks ?? []);
  }
  if (type === 'tool') {
    out.tool_call_id = m.tool_call_id;
    out.status = m.status ?? 'success';
    // A reviewer's `respond` before respond.ts has mended it (the approval node's own update).
    if (typeof out.content === 'string' && out.content.startsWith(RESPOND_MARK)) Object.assign(out, { content: out.content.slice(RESPOND_MARK.length), status: 'success' });
    if (m.artifact !== undefined) out.artifact = toWire(m.artifact);
  }
  return out;
}

/** Any value made plain for JSON: messages as dicts, dates as ISO strings, binary as base64. */
export function toWire(value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value !== 'object') return typeof value === 'bigint' ? Number(value) : value;
  if (isBaseMessage(value)) return messageToDict(value);
  if (Array.isArray(value)) return value.map(toWire);
  if (value instanceof Date) return value.toISOString();
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'function' || v === undefined) continue;
    out[k] = toWire(v);
  }
  return out;
}
