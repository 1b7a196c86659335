// Turning an agent's `<provider>:<model_id>` (plus an optional saved model configuration) into a chat
// model: `scripted` is built in, every other provider goes through LangChain's `initChatModel`.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { initChatModel } from 'langchain/chat_models/universal';
import { completeStreamsOnly, openAiCompatibleFetch, withoutEchoedCredentials } from './request.js';
import { ScriptedChatModel } from './scripted.js';

/** A model to build: provider and model id, and what a saved configuration adds. */
export interface ModelSpec {
  provider: string;
  model: string;
  /** An OpenAI-compatible (or provider) base URL from a saved configuration. */
  baseUrl?: string | undefined;
  /** The provider key from a saved configuration (decrypted; never logged). */
  apiKey?: string | undefined;
  /** Extra constructor parameters (temperature, max_tokens, `delay_ms` for scripted, …). */
  params?: Record<string, unknown> | undefined;
}

/** Limits that keep a dead provider from holding a run for minutes. */
export interface ModelLimits {
  timeoutMs: number;
  maxRetries: number;
}

/** Split `<provider>:<model_id>` at its first colon; undefined when there is no colon. */
export function parseModelId(modelId: string): { provider: string; model: string } | undefined {
  const at = modelId.indexOf(':');
  if (at <= 0 || at === modelId.length - 1) return undefined;
  return { provider: modelId.slice(0, at), model: modelId.slice(at + 1) };
}

/** Build the chat model of `spec`. Provider errors (unknown provider, missing key) are thrown as they are. */
export async function resolveChatModel(spec: ModelSpec, limits: ModelLimits): Promise<BaseChatModel> {
  const params = spec.params ?? {};
  if (spec.provider === 'scripted') {
    const delay = Number(params.delay_ms ?? params.delayMs ?? 0);
    return new ScriptedChatModel({ model: spec.model, delayMs: Number.isFinite(delay) ? delay : 0 });
  }
  const fields: Record<string, unknown> = {
    ...camelKeys(params),
    modelProvider: spec.provider,
    maxRetries: limits.maxRetries,
    timeout: limits.timeoutMs,
  };
  if (spec.apiKey) fields.apiKey = spec.apiKey;
  // Only the fields the provider expects, and no key repeated back in an error (src/runtime/models/request.ts).
  // A stream cut short is an error, not a shorter answer.
  if (spec.provider === 'openai') fields.configuration = { fetch: completeStreamsOnly('openai', withoutEchoedCredentials(openAiCompatibleFetch())) };
  else if (spec.provider === 'azure_openai') fields.configuration = { fetch: completeStreamsOnly('openai', withoutEchoedCredentials()) };
  else if (spec.provider === 'anthropic') fields.clientOptions = { fetch: completeStreamsOnly('anthropic', withoutEchoedCredentials()) };
  if (spec.baseUrl) {
    // Each provider package names its base URL differently.
    if (spec.provider === 'openai') fields.configuration = { ...(fields.configuration as object), baseURL: spec.baseUrl };
    else if (spec.provider === 'anthropic') fields.anthropicApiUrl = spec.baseUrl;
    else fields.baseUrl = spec.baseUrl;
  }
  const model = await initChatModel(spec.model, fields);
  return model as unknown as BaseChatModel;
}

function camelKeys(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]));
}
