// The error catalogue: every error Hangar returns, with a stable code and its HTTP status.
// Services throw HangarError; src/http/errors.ts renders it once, in the format of each API surface.

/** Broad class of an error, the `type` field of `/v1/deepagents` error bodies. */
export type ErrorType =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream'
  | 'unavailable'
  | 'internal';

interface Entry {
  status: number;
  type: ErrorType;
  /** What the code means, for the API reference. */
  meaning: string;
}

/** Every error code. A code, once published, keeps its meaning. */
export const errorCatalogue = {
  // Request shape
  invalid_json: { status: 400, type: 'invalid_request', meaning: 'The body is not valid JSON.' },
  validation_failed: {
    status: 422,
    type: 'invalid_request',
    meaning: 'A field, query parameter or path parameter is missing or invalid; `errors` lists each one.',
  },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request',
    meaning: 'The body is not `application/json` where JSON is expected.',
  },
  payload_too_large: {
    status: 413,
    type: 'payload_too_large',
    meaning: 'The body is larger than the configured limit.',
  },
  route_not_found: { status: 404, type: 'not_found', meaning: 'No route has this method and path.' },
  method_not_allowed: { status: 405, type: 'invalid_request', meaning: 'The path exists but not with this method.' },
  // Authentication and permission
  unauthorized: { status: 401, type: 'authentication', meaning: 'The `X-Api-Key` header is missing, unknown or revoked.' },
  forbidden: { status: 403, type: 'permission', meaning: "The key's role does not allow this operation." },
  preview_access_required: {
    status: 403,
    type: 'permission',
    meaning: "The key's workspace does not have preview access to the agent runtime.",
  },
  too_many_requests: {
    status: 429,
    type: 'rate_limited',
    meaning: 'Too many failed authentications from this address, or more requests than the per-key rate allows; wait for `Retry-After` seconds.',
  },
  // Tool servers
  mcp_server_not_found: { status: 404, type: 'not_found', meaning: 'No tool server with this id in the workspace.' },
  mcp_server_unreachable: { status: 502, type: 'upstream', meaning: 'The tool server could not be reached, or refused the listing of its tools.' },
  mcp_server_not_oauth: {
    status: 409,
    type: 'conflict',
    meaning: 'The tool server is not OAuth-backed (`auth_type: "oauth"` with an `oauth_provider_id`, or `oauth_mode: "per_user_dynamic_client"`).',
  },
  mcp_server_oauth_unsupported: {
    status: 409,
    type: 'conflict',
    meaning:
      'The `per_user_dynamic_client` tool server (or its authorization server) publishes no OAuth metadata or no client registration endpoint, so no client can be registered per user; register an OAuth provider and use `legacy_shared_provider`.',
  },
  oauth_registration_failed: {
    status: 502,
    type: 'upstream',
    meaning:
      'Registering an OAuth client for a `per_user_dynamic_client` tool server failed: a metadata request failed, the metadata named an address the outbound policy refuses (`HANGAR_EGRESS_ALLOW`), or the authorization server refused the registration (the detail carries its error).',
  },
  mcp_server_url_taken: {
    status: 409,
    type: 'conflict',
    meaning: 'A tool server with this URL is already registered in the workspace.',
  },
  // Agents and their revisions
  agent_not_found: { status: 404, type: 'not_found', meaning: 'No agent with this id in the workspace (or it was deleted).' },
  revision_not_found: { status: 404, type: 'not_found', meaning: 'The agent has no revision with this id.' },
  agent_file_too_large: {
    status: 413,
    type: 'payload_too_large',
    meaning: 'One file of the agent is larger than the per-file limit; `detail` names it.',
  },
  agent_too_large: {
    status: 413,
    type: 'payload_too_large',
    meaning: 'The agent’s files together exceed the per-agent size or file-count limit.',
  },
  // Saved model configurations
  // The store (memories) and API keys
  store_scan_limit: { status: 400, type: 'invalid_request', meaning: 'A store listing filtered to what the caller may see looked at too many entries; name a narrower namespace.' },
  api_key_not_found: { status: 404, type: 'not_found', meaning: 'No API key with this id in the workspace.' },
  model_config_not_found: { status: 404, type: 'not_found', meaning: 'No model configuration with this id in the workspace.' },
  model_config_name_taken: {
    status: 409,
    type: 'conflict',
    meaning: 'A model configuration with this name already exists in the workspace.',
  },
  // Threads and runs
  thread_not_found: { status: 404, type: 'not_found', meaning: 'No thread with this id in the workspace.' },
  run_not_found: { status: 404, type: 'not_found', meaning: 'No run with this id on this thread.' },
  checkpoint_not_found: { status: 404, type: 'not_found', meaning: 'No checkpoint with this id in the thread’s history.' },
  thread_busy: {
    status: 409,
    type: 'conflict',
    meaning: 'The thread already has a pending or running run (one active run per thread); wait for it to finish.',
  },
  agent_deleted: {
    status: 502,
    type: 'upstream',
    meaning: "The thread's agent was deleted, so no new run can start on the thread (its history stays readable).",
  },
  // Approvals, cancellation and multitasking (issue 5)
  thread_not_interrupted: {
    status: 409,
    type: 'conflict',
    meaning: 'The thread has no pending interrupt: there is nothing to resume or resolve.',
  },
  stream_capacity_reached: {
    status: 503,
    type: 'unavailable',
    meaning: 'This server already serves as many run streams as HANGAR_STREAM_CAPACITY allows; retry shortly or on another replica.',
  },
  thread_has_no_agent: { status: 409, type: 'conflict', meaning: 'The thread has no agent yet (a LangGraph client created it without one); its first run binds one.' },
  thread_exists: { status: 409, type: 'conflict', meaning: 'A thread with this `thread_id` already exists (send `if_exists: "do_nothing"` to get it instead).' },
  run_active: { status: 409, type: 'conflict', meaning: 'The run is still pending or running; cancel it before deleting it.' },
  // OAuth providers, authorization sessions and tokens (issue 7)
  agent_revision_mismatch: {
    status: 412,
    type: 'conflict',
    meaning: 'The update’s `If-Match` names a revision that is no longer the agent’s head: it was updated meanwhile. Read it again.',
  },
  oauth_provider_not_found: { status: 404, type: 'not_found', meaning: 'No OAuth provider with this `provider_id` (or id) in the workspace.' },
  oauth_provider_id_taken: {
    status: 409,
    type: 'conflict',
    meaning: 'An OAuth provider with this `provider_id` already exists in the workspace.',
  },
  oauth_provider_in_use: {
    status: 409,
    type: 'conflict',
    meaning: 'An OAuth-backed tool server uses this provider; delete that server or switch it to `auth_type: "headers"` first.',
  },
  oauth_session_not_found: { status: 404, type: 'not_found', meaning: 'No authorization session with this id for the caller.' },
  oauth_token_not_found: {
    status: 404,
    type: 'not_found',
    meaning: 'The `token_id` of an authorization session names no token of the caller for this provider (the caller’s is `<provider_id>:<principal>`, the `token` a COMPLETED session answers).',
  },
  oauth_authorization_required: {
    status: 409,
    type: 'conflict',
    meaning: 'The principal has not authorized this OAuth provider yet (or the grant was revoked); the detail carries the authorization URL.',
  },
  oauth_provider_error: {
    status: 502,
    type: 'upstream',
    meaning: 'The OAuth provider refused the code or refresh token, or its token endpoint answered in an unexpected way.',
  },
  // Code-host integrations (issue 7)
  integration_not_found: { status: 404, type: 'not_found', meaning: 'No code-host integration with this id in the workspace.' },
  vcshost_credentials_rejected: {
    status: 400,
    type: 'invalid_request',
    meaning: "The code host rejected the integration's credentials (bad, expired or revoked); replace the integration.",
  },
  vcshost_unreachable: {
    status: 502,
    type: 'upstream',
    meaning: 'The code host (or the directory of a `git` integration) could not be reached.',
  },
  vcshost_error: { status: 502, type: 'upstream', meaning: 'The code host answered with an unexpected error.' },
  // Deployments (/v2/deployments)
  deployment_not_found: { status: 404, type: 'not_found', meaning: 'No deployment with this id in the workspace.' },
  deployment_revision_not_found: { status: 404, type: 'not_found', meaning: 'No revision with this id in the deployment.' },
  deployment_name_taken: { status: 409, type: 'conflict', meaning: 'A deployment with this name already exists in the workspace.' },
  deployment_kubernetes_name_taken: {
    status: 409,
    type: 'conflict',
    meaning:
      'Another workspace has a kubernetes deployment of this name in the same namespace (their Kubernetes objects would be the same ones), or another deployment there names the Secret or volume claim this one would keep its secrets or database in.',
  },
  deployment_being_deleted: { status: 409, type: 'conflict', meaning: 'The deployment is being deleted and can no longer change.' },
  deployment_not_serving: { status: 503, type: 'upstream', meaning: 'The deployment has no running revision to forward the request to.' },
  deployment_upload_not_found: { status: 404, type: 'not_found', meaning: 'No source upload with this id in the workspace.' },
  deployment_upload_invalid: { status: 400, type: 'invalid_request', meaning: 'The uploaded source is not a gzip-compressed tarball, or it unpacks past its limits.' },
  deployment_upload_in_use: { status: 409, type: 'conflict', meaning: 'A revision was made from this upload, so its tarball can no longer change; start a new upload.' },
  // Tracing
  tracing_project_not_found: { status: 404, type: 'not_found', meaning: 'No tracing project with this id in the workspace.' },
  tracing_project_name_taken: {
    status: 409,
    type: 'conflict',
    meaning: 'A tracing project with this name already exists in the workspace.',
  },
  tracing_run_not_found: { status: 404, type: 'not_found', meaning: 'No traced run with this id in the workspace.' },
  trace_not_found: {
    status: 404,
    type: 'not_found',
    meaning: 'The run exists but has no trace: tracing was off when it ran, or it has not started yet.',
  },
  // Schedules and webhooks (issue 16)
  schedule_not_found: { status: 404, type: 'not_found', meaning: 'No schedule (cron) with this id in the workspace.' },
  schedule_changed: {
    status: 412,
    type: 'conflict',
    meaning: 'The update’s `If-Match` names an `updated_at` the schedule no longer has: it was changed meanwhile. Read it again.',
  },
  // Server side
  database_unavailable: {
    status: 503,
    type: 'unavailable',
    meaning: 'The server lost its database connection, or could not open one, while serving the request (a database restart or failover); retry shortly.',
  },
  server_stopping: {
    status: 503,
    type: 'unavailable',
    meaning: 'This server stopped while waiting for the run, which has not ended (it goes on, or waits for a worker): wait for it again on another replica (`GET …/runs/{run_id}/join`).',
  },
  internal_error: { status: 500, type: 'internal', meaning: 'An unexpected error; the `request_id` identifies it in the logs.' },
} satisfies Record<string, Entry>;

/**
 * Why a run failed: the `code` of a run's closing `error` event and of its record's `error`. These are
 * not HTTP errors (the run was accepted); they say what ended it. A code, once published, keeps its meaning.
 */
export const runErrorCatalogue = {
  model_auth_failed: 'The model provider refused the API key (HTTP 401 or 403), or no key is configured for it. Fix the key of the saved model configuration (or the provider\'s environment variable).',
  model_rate_limited: 'The model provider kept answering 429 (rate limit or quota) after Hangar\'s retries, which honour `Retry-After`.',
  model_unavailable: 'The model provider could not be reached or kept failing (connection refused, HTTP 5xx, overloaded) after Hangar\'s retries.',
  model_timeout: 'A model call took longer than `HANGAR_MODEL_CALL_TIMEOUT_MS` (every attempt included), or its stream went silent for longer than `HANGAR_MODEL_IDLE_TIMEOUT_MS`.',
  model_bad_response: 'The model provider answered with something that is not a valid response of its API (malformed JSON or stream, no message at all, or a stream that stopped half-way).',
  model_not_found: 'The model provider does not know the model (HTTP 404), or the provider prefix is not supported.',
  model_request_rejected: 'The model provider refused the request as invalid (HTTP 400, 413 or 422), for example a context that is too long.',
  run_timeout: 'The run took longer than its time limit (`runtime.run_timeout_seconds` of the agent, else `HANGAR_RUN_TIMEOUT_MS`) and was stopped; its status is `timeout`.',
  run_failed: 'The run failed for another reason; `error` names the error type and `message` says what happened.',
  run_lease_expired: 'The worker running the run stopped (its lease expired) and the run used all its attempts.',
} as const satisfies Record<string, string>;

/** A code of `runErrorCatalogue`. */
export type RunErrorCode = keyof typeof runErrorCatalogue;

/** How a run failed, as its `error` event and record carry it: a stable code, the error type and a message. */
export interface RunFailure {
  code: RunErrorCode;
  /** The error's type (class name), e.g. `ModelTimeout`, `AuthenticationError`. */
  error: string;
  /** What happened, for people; never a stack trace, a path of the server or a key. */
  message: string;
}

/** A stable, snake_case error code. */
export type ErrorCode = keyof typeof errorCatalogue;

/** One problem with one field, as in FastAPI-style validation errors. */
export interface FieldIssue {
  /** Where: `body`, `query`, `path` or `header`, then the field path. */
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An expected failure: it carries a catalogued code and a message that says what is wrong. */
export class HangarError extends Error {
  override name = 'HangarError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly issues: FieldIssue[] | undefined;

  constructor(code: ErrorCode, detail: string, options: { issues?: FieldIssue[]; cause?: unknown } = {}) {
    super(detail, { cause: options.cause });
    const entry: Entry = errorCatalogue[code];
    this.code = code;
    this.status = entry.status;
    this.type = entry.type;
    this.issues = options.issues;
  }
}

/** A validation failure of one or more fields. */
export function invalid(issues: FieldIssue[]): HangarError {
  const detail = issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ');
  return new HangarError('validation_failed', detail, { issues });
}

/** A validation failure of a single body field. */
export function invalidField(loc: (string | number)[], msg: string, type = 'value_error'): HangarError {
  return invalid([{ loc: ['body', ...loc], msg, type }]);
}

const KEY_SHAPES = [
  /\b(Bearer|Basic|Token)\s+\S{6,}/gi,
  // Whole keys and the masked fragments providers echo ("sk-ab***yz", "sk-proj-…1234").
  /\b(sk|pk|rk|hgr|key)[-_][A-Za-z0-9_*.…-]{4,}/gi,
  /\b[A-Za-z0-9]{2,}\*{3,}[A-Za-z0-9]*/g,
];

/**
 * An error message as clients and traces may see it: without stack frames, server paths and key-like
 * fragments (`knownSecrets` too), on one line, at most 500 characters. The full error goes to the
 * server log at debug level.
 */
export function scrubMessage(text: string, knownSecrets: readonly string[] = []): string {
  let out = text.split(/\n\s+at /)[0]!;
  for (const secret of knownSecrets) if (secret.length >= 6) out = out.split(secret).join('[redacted]');
  for (const shape of KEY_SHAPES) out = out.replace(shape, '[redacted]');
  // Absolute file paths of this server (file:///…, /home/…/src/x.ts:12:3); URL paths (/v1/…) stay.
  out = out.replace(/file:\/\/\/\S+/g, '[path]').replace(/(^|[\s('"`=:])\/(?:home|usr|tmp|var|opt|root|work|srv|app|Users|etc|mnt|private|nix|workspace)\/[^\s'"`)]*/g, '$1[path]');
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > 500 ? `${out.slice(0, 497)}…` : out || 'no details';
}
