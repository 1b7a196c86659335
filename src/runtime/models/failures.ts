// Why a run failed, as a stable code of the run error catalogue (src/core/errors.ts) beside the error's
// type and a message for people. Provider SDKs (OpenAI, Anthropic, …) and LangChain wrap their errors
// differently (a MiddlewareError around a LangChain error around an SDK error), so the cause chain is
// walked and the HTTP status, the error class and LangChain's `lc_error_code` are read wherever they are.
// Messages are scrubbed: no stack traces, no server paths, no key fragments.
import { scrubMessage as scrub, type RunErrorCode, type RunFailure } from '../../core/errors.js';
import { isDatabaseGone } from '../../db/reconnect.js';

/** A failure Hangar itself decided on (a deadline), carrying its code. */
export class RunFailureError extends Error {
  constructor(
    readonly code: RunErrorCode,
    name: string,
    message: string,
  ) {
    super(message);
    this.name = name;
  }
}

/** The code, type and scrubbed message of why a run failed. `knownSecrets` are removed from the message. */
export function classifyFailure(error: unknown, knownSecrets: readonly string[] = []): RunFailure {
  const chain = causes(error);
  const own = chain.find((e): e is RunFailureError => e instanceof RunFailureError);
  if (own) return { code: own.code, error: own.name, message: scrub(own.message, knownSecrets) };
  // Hangar's own database went away under the run (not the provider's fault): say so, without the
  // database's words (they name it).
  if (chain.some(isDatabaseGone)) return { code: 'run_failed', error: 'DatabaseUnavailable', message: 'the database could not be reached while the run executed; start it again' };
  const status = chain.map(statusOf).find((s) => s !== undefined);
  const lcCode = chain.map((e) => (e as { lc_error_code?: unknown }).lc_error_code).find((c): c is string => typeof c === 'string');
  // SDK error classes do not always set `name`: their constructor names them.
  const names = chain.flatMap((e) => (e instanceof Error ? [e.name, e.constructor.name] : []));
  const deepest = chain.at(-1);
  const type = typeName(chain.find((e) => statusOf(e) !== undefined) ?? deepest ?? error);
  const raw = messageOf(chain.find((e) => statusOf(e) !== undefined) ?? deepest ?? error);
  // An empty answer fails deep in LangChain with words that would send people looking at Hangar.
  const detail = chain.some(isEmptyAnswer) ? 'its answer held no message (no choices)' : scrub(raw, knownSecrets);
  const code = codeOf(status, lcCode, names, chain);
  return { code, error: type, message: explain(code, status, detail) };
}

function codeOf(status: number | undefined, lcCode: string | undefined, names: string[], chain: unknown[]): RunErrorCode {
  if (status === 401 || status === 403 || lcCode === 'MODEL_AUTHENTICATION') return 'model_auth_failed';
  if (status === 429 || lcCode === 'MODEL_RATE_LIMIT') return 'model_rate_limited';
  if (status === 404 || lcCode === 'MODEL_NOT_FOUND') return 'model_not_found';
  if (status === 408 || names.some((n) => n === 'TimeoutError' || n === 'APIConnectionTimeoutError')) return 'model_timeout';
  if (status !== undefined && status >= 500) return 'model_unavailable';
  if (status === 400 || status === 413 || status === 422 || names.includes('ContextOverflowError')) return 'model_request_rejected';
  if (names.includes('SyntaxError') || names.includes('IncompleteStreamError') || chain.some(isMalformed) || chain.some(isEmptyAnswer)) return 'model_bad_response';
  if (names.some((n) => n === 'APIConnectionError' || n === 'FetchError') || chain.some(isConnectionFailure)) return 'model_unavailable';
  const text = chain.map(messageOf).join('\n');
  // A provider client that could not find a key throws before any request.
  if (/api[ _-]?key/i.test(text) && /(not found|missing|must be|is required|no api key|not set|provide|please set)/i.test(text)) return 'model_auth_failed';
  if (/unsupported (model )?provider|unable to infer model provider|is neither <provider>/i.test(text)) return 'model_not_found';
  return 'run_failed';
}

/** A message for people: what happened in Hangar's words, then (scrubbed) what the provider said. */
function explain(code: RunErrorCode, status: number | undefined, detail: string): string {
  const http = status !== undefined ? ` (HTTP ${status})` : '';
  switch (code) {
    case 'model_auth_failed':
      // Providers echo part of a refused key ("Incorrect API key provided: sk-ab***yz"): say nothing of it.
      return `the model provider refused the API key or found none${http}; check the saved model configuration's api_key or, for a direct <provider>:<model>, the provider's key in the server's environment (for example OPENAI_API_KEY)`;
    case 'model_rate_limited':
      return `the model provider is rate limiting requests${http} and still was after retries: ${detail}`;
    case 'model_unavailable':
      return `the model provider is unavailable${http} and still was after retries: ${detail}`;
    case 'model_not_found':
      return `the model provider does not know this model${http}: ${detail}`;
    case 'model_request_rejected':
      return `the model provider rejected the request${http}: ${detail}`;
    case 'model_timeout':
      return `the model provider did not answer in time${http}: ${detail}`;
    case 'model_bad_response':
      return `the model provider answered with a malformed or empty response: ${detail}`;
    default:
      return detail;
  }
}

/**
 * `error`, its `cause`, their causes… Every wrapModelCall middleware of the agent (deepagents stacks
 * about ten) wraps a model error in one more MiddlewareError, so the walk goes 64 deep (cycles stop it).
 */
function causes(error: unknown): unknown[] {
  const out: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && out.length < 64 && !out.includes(current)) {
    out.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

function statusOf(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const s = (error as { status?: unknown }).status ?? (error as { response?: { status?: unknown } }).response?.status;
  const n = typeof s === 'string' ? Number(s) : s;
  return typeof n === 'number' && Number.isInteger(n) && n >= 400 && n < 600 ? n : undefined;
}

function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT)$/.test(code)) return true;
  return /fetch failed|connection error|socket hang up|other side closed|\bterminated\b/i.test(messageOf(error));
}

function isMalformed(error: unknown): boolean {
  return /unexpected token|unexpected end of json|is not valid json|could not parse|failed to parse|invalid json|malformed/i.test(messageOf(error));
}

/**
 * A provider answer with no message in it (OpenAI-compatible servers answering `"choices": []`, or a
 * stream of no choices): LangChain either says so (streamed) or fails reading the first generation's
 * message (not streamed), a TypeError raised in its chat model code, not Hangar's.
 */
function isEmptyAnswer(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (/received empty response from chat model/i.test(error.message)) return true;
  return error instanceof TypeError && /reading 'message'/.test(error.message) && /\/@langchain\/core\/(dist|src)\/language_models\/chat_models\./.test(error.stack?.split('\n')[1] ?? '');
}

function typeName(error: unknown): string {
  if (error instanceof Error) return error.name && error.name !== 'Error' ? error.name : error.constructor.name;
  return 'Error';
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return String(error);
}
