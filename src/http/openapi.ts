// Helpers shared by route definitions, and the OpenAPI document's framing: how the gaps of SPEC.md
// are filled (DESIGN.md §1), written where clients read them.
import { z } from '@hono/zod-openapi';
import { errorCatalogue, runErrorCatalogue } from '../core/errors.js';
import type { Surface } from './surface.js';

/** The security requirement of every authenticated route. */
export const apiKeySecurity = [{ ApiKeyAuth: [] }];

/** A required JSON request body. */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return {
    required: true,
    content: { 'application/json': { schema } },
    ...(description ? { description } : {}),
  } as const;
}

/** A JSON response. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } } as const;
}

const FieldIssueSchema = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])).openapi({ example: ['body', 'url'] }),
    msg: z.string().openapi({ example: 'must be an absolute http:// or https:// URL' }),
    type: z.string().openapi({ example: 'url_error' }),
  })
  .openapi('FieldIssue');

/** Error body of `/v1/deepagents` and Hangar's own APIs. */
export const ErrorBody = z
  .object({
    type: z.string().openapi({ description: 'Broad class of the error.', example: 'not_found' }),
    code: z.string().openapi({ description: 'Stable snake_case code; see the table in the API description.', example: 'mcp_server_not_found' }),
    detail: z.string().openapi({ description: 'What is wrong, for people.' }),
    status: z.number().int().openapi({ description: 'The HTTP status, repeated.', example: 404 }),
    errors: z.array(FieldIssueSchema).optional().openapi({ description: 'Each invalid field, for `validation_failed`.' }),
    request_id: z.string().optional().openapi({ description: 'For `internal_error`: the id to look for in the server logs.' }),
  })
  .openapi('ErrorResponse');

/** 401/403 body of the authentication layer. */
export const AuthErrorBody = z
  .object({
    error: z.enum(['Unauthorized', 'Forbidden']),
    detail: z.string().optional().openapi({ description: 'Why (a Hangar addition).' }),
  })
  .openapi('AuthError');

/** Control-plane error body for anything but validation. */
export const DetailErrorBody = z.object({ detail: z.string() }).openapi('DetailError');

/** Control-plane validation error body (422). */
export const ValidationErrorBody = z.object({ detail: z.array(FieldIssueSchema) }).openapi('ValidationError');

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request (for example, invalid JSON).',
  401: 'Missing, unknown or revoked API key.',
  403: 'The key may not do this.',
  404: 'Not found in the caller’s workspace.',
  409: 'Conflicts with the current state.',
  412: 'The precondition (`If-Match`) does not hold any more.',
  413: 'Body larger than the configured limit.',
  415: 'Body is not JSON.',
  422: 'A field is missing or invalid.',
  502: 'An upstream dependency failed.',
};

/** The error responses of a route, in the surface's format. 401 and 403 are always included. */
export function errorResponses(surface: Surface, statuses: number[]) {
  const all = [...new Set([401, 403, ...statuses])].sort();
  return Object.fromEntries(
    all.map((status) => {
      // Every 401 and 403 comes from the authentication layer (unauthorized, forbidden,
      // preview_access_required), which answers in its own shape outside the control plane.
      const schema = surface === 'controlplane' ? (status === 422 ? ValidationErrorBody : DetailErrorBody) : status === 401 || status === 403 ? AuthErrorBody : ErrorBody;
      return [status, jsonResponse(schema, STATUS_TEXT[status] ?? 'Error.')];
    }),
  );
}

/** A UUID path parameter. */
export function uuidParam(name: string, description: string) {
  return z.uuid({ message: 'must be a UUID' }).openapi({ param: { name, in: 'path' }, description });
}

/** The framing of the OpenAPI document: title, servers, and the written-down gap choices. */
export function documentConfig(version: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hangar API',
      version,
      description: DESCRIPTION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative: the document describes whichever Hangar serves it.
    servers: [{ url: '/', description: 'This Hangar server.' }],
    tags: [
      { name: 'Agents', description: 'Agents as versioned file trees: every create and update is a git commit; clone them with `git`.' },
      { name: 'Model configurations', description: 'Saved model settings an agent can name instead of `<provider>:<model_id>`.' },
      { name: 'Threads', description: 'Conversations with one agent: status, state, history.' },
      { name: 'Runs', description: 'Streamed runs of an agent on a thread (server-sent events), and their records.' },
      { name: 'Schedules', description: 'Agent runs on a cron schedule (also as LangGraph `crons`).' },
      { name: 'Webhooks', description: 'Signed POSTs when runs end: the signing secret and each run’s delivery log.' },
      {
        name: 'Assistants (LangGraph)',
        description:
          'The LangGraph Agent Server protocol’s assistants: every agent is an assistant. Point `@langchain/langgraph-sdk` at `<server>/v1/deepagents` with `X-Api-Key` (docs/clients.md).',
      },
      { name: 'Usage', description: 'Runs, tokens and errors per agent and model over a time range (test runs excluded).' },
      { name: 'Tool servers', description: 'MCP servers and the credential headers Hangar sends to them.' },
      { name: 'OAuth providers', description: 'OAuth 2.0 clients of the workspace, used by OAuth-backed tool servers.' },
      { name: 'Auth sessions', description: 'The OAuth 2.0 authorization-code flow for the calling principal, and its browser callback.' },
      { name: 'Code-host integrations', description: 'GitHub (and GitHub Enterprise) accounts or app installations, and directories of bare git repositories, whose repositories deployments build from.' },
      {
        name: 'Deployments',
        description:
          'Deployments of LangGraph applications: the desired state, its revisions, and their build and deploy logs. A reconciler drives each revision with the driver configured for its source (`HANGAR_DEPLOY_DRIVERS`). A locally run deployment answers at `/v2/deployments/{deployment_id}/app/…` (reported as `source_config.custom_url`), with the same API key.',
      },
      { name: 'Tracing', description: 'Tracing projects, traced runs as trees, and per-project figures.' },
      {
        name: 'LangSmith-compatible ingestion',
        description: 'Point the `langsmith` SDK here: LANGSMITH_ENDPOINT=<server>/langsmith, LANGSMITH_API_KEY=<a Hangar API key>.',
      },
      { name: 'Service', description: 'Health and information; no API key needed.' },
    ],
  };
}

const errorTable = Object.entries(errorCatalogue)
  .map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.meaning} |`)
  .join('\n');

const runErrorTable = Object.entries(runErrorCatalogue)
  .map(([code, meaning]) => `| \`${code}\` | ${meaning} |`)
  .join('\n');

const DESCRIPTION = `Hangar is a self-hostable implementation of the managed agent runtime and deployment
management API. A client written for the hosted API works against Hangar by changing its base URL.

## Authentication
Every request under \`/v1/deepagents\`, \`/v2\` and \`/v1/integrations\` (and Hangar's own \`/v1/*\` APIs
and the LangSmith-compatible \`/langsmith\` API) carries \`X-Api-Key\`. A key belongs to one workspace and has a role: \`admin\` and \`member\` may read,
change and invoke; \`viewer\` may only read, and never sees tool server credentials. The agent runtime
(\`/v1/deepagents\`) also requires the workspace's preview access. Another workspace's resources answer 404.

## Conventions where the contract is silent
- **Agent runtime (\`/v1/deepagents\`).** Errors are \`{type, code, detail, status}\` with a stable
  \`code\` (table below); validation errors add \`errors: [{loc, msg, type}]\`. 401 and 403 from the
  authentication layer are \`{"error": "Unauthorized"}\` and \`{"error": "Forbidden"}\` (plus \`detail\`).
  Creates answer 201. Tool server and agent deletes answer 204 and succeed again when repeated.
  The tool server list is a bare array; the agent list is \`{items, next_cursor}\`.
- **Control plane (\`/v2\`, \`/v1/integrations\`).** Creates answer 201 (except \`POST /v2/auth/providers\`,
  200), deletes 204. Errors are \`{"detail": "..."}\`; validation errors are 422
  \`{"detail": [{loc, msg, type}]}\`. Lists are \`{resources, offset}\` where \`offset\` is the offset of the
  next page; a page shorter than \`limit\` is the last.
- **Everywhere.** Invalid JSON is 400, a body that is not JSON 415, a body over the configured limit 413,
  an invalid path parameter (such as an id that is not a UUID) 422, an unknown route 404. Unknown
  fields in request bodies are ignored. Timestamps are ISO 8601 in UTC.

## Error codes
| code | status | meaning |
|---|---|---|
${errorTable}

## Run error codes
A run that fails ends its stream with an \`error\` event \`{code, error, message}\`, and its record
(\`GET …/runs/{run_id}\`) keeps the same \`error\`: \`code\` is stable (below), \`error\` the error's type,
\`message\` what happened (never a stack trace, a server path or a key). A run stopped by its time limit
has status \`timeout\`; other failures \`error\`. Either way the thread takes the next message.

| code | meaning |
|---|---|
${runErrorTable}
`;
