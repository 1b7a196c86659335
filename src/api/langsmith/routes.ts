// /langsmith: LangSmith-compatible ingestion. An application instrumented with the `langsmith` SDK (or
// LangChain's tracer) sends its traces to Hangar with LANGSMITH_ENDPOINT=<hangar>/langsmith and
// LANGSMITH_API_KEY=<a Hangar API key>.
import { createRoute, z } from '@hono/zod-openapi';
import type { ZodType } from 'zod';
import { type FieldIssue, HangarError, invalid } from '../../core/errors.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, uuidParam } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import type { RunBatch } from '../../tracing/run.js';
import { createFromWire, updateFromWire } from '../../tracing/wire.js';
import { assembleMultipart } from './multipart.js';
import { IngestAccepted, LangSmithInfo, WireBatch, WireRunCreate, WireRunPatchBody, WireRunUpdate } from './schemas.js';

/** Where the LangSmith-compatible API is mounted. */
export const LANGSMITH_PREFIX = '/langsmith';
const tags = ['LangSmith-compatible ingestion'];
const accepted = { 202: jsonResponse(IngestAccepted, 'Stored.') };

const info = createRoute({
  method: 'get',
  path: `${LANGSMITH_PREFIX}/info`,
  tags,
  summary: 'Server information for the LangSmith SDK',
  description: 'Tells the SDK to send runs through the multipart endpoint, and the batch limits.',
  security: apiKeySecurity,
  responses: { 200: jsonResponse(LangSmithInfo, 'What the server accepts.'), ...errorResponses('hangar', []) },
});

const createRun = createRoute({
  method: 'post',
  path: `${LANGSMITH_PREFIX}/runs`,
  tags,
  summary: 'Report one run',
  description: 'Stores a run (created, or completed when it is already stored). Secrets are redacted first.',
  security: apiKeySecurity,
  request: { body: jsonBody(WireRunCreate) },
  responses: { ...accepted, ...errorResponses('hangar', [400, 404, 413, 415, 422]) },
});

const patchRun = createRoute({
  method: 'patch',
  path: `${LANGSMITH_PREFIX}/runs/{run_id}`,
  tags,
  summary: 'Complete or amend one run',
  description: 'Sets end time, outputs, error and other fields of a run reported earlier.',
  security: apiKeySecurity,
  request: { params: z.object({ run_id: uuidParam('run_id', 'Run id.') }), body: jsonBody(WireRunPatchBody) },
  responses: { ...accepted, ...errorResponses('hangar', [400, 413, 415, 422]) },
});

const batch = createRoute({
  method: 'post',
  path: `${LANGSMITH_PREFIX}/runs/batch`,
  tags,
  summary: 'Report runs in a batch',
  description: '`post` holds runs to create, `patch` runs to complete; a run created and completed in one batch may be sent once in `post`.',
  security: apiKeySecurity,
  request: { body: jsonBody(WireBatch) },
  responses: { ...accepted, ...errorResponses('hangar', [400, 404, 413, 415, 422]) },
});

const multipart = createRoute({
  method: 'post',
  path: `${LANGSMITH_PREFIX}/runs/multipart`,
  tags,
  summary: 'Report runs as multipart form data',
  description:
    'The SDK’s preferred form: parts named `post.<run_id>` and `patch.<run_id>` hold a run as JSON, and ' +
    '`post.<run_id>.inputs` (or `outputs`, `extra`, `events`, `error`, `serialized`) hold its large fields. ' +
    'Parts `attachment.<run_id>.<name>` are accepted and not stored. Gzip bodies are not accepted (the info endpoint says so).',
  security: apiKeySecurity,
  request: {
    body: {
      required: true,
      // A plain JSON schema: the parts are parsed and validated run by run in the handler.
      content: { 'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', description: 'A JSON part.' } } } },
    },
  },
  responses: { ...accepted, ...errorResponses('hangar', [400, 404, 413, 415, 422]) },
});

/** Routes of the LangSmith-compatible ingestion API. */
export function langsmithRoutes({ services, info: server, bodyLimitBytes }: AppDeps) {
  return newRouter()
    .openapi(info, (c) =>
      c.json(
        {
          version: server.version,
          license_expiration_time: null,
          batch_ingest_config: {
            use_multipart_endpoint: true,
            size_limit: 100,
            size_limit_bytes: Math.floor(bodyLimitBytes * 0.9),
            scale_up_qsize_trigger: 1000,
            scale_up_nthreads_limit: 16,
            scale_down_nempty_trigger: 4,
          },
          instance_flags: { gzip_body_enabled: false, dataset_examples_multipart_enabled: false },
        },
        200,
      ),
    )
    .openapi(createRun, async (c) => {
      const run = createFromWire(c.req.valid('json'));
      return c.json({ accepted: await services.tracing.ingest(c.get('caller'), { post: [run], patch: [] }) }, 202);
    })
    .openapi(patchRun, async (c) => {
      const run = updateFromWire({ ...c.req.valid('json'), id: c.req.valid('param').run_id });
      return c.json({ accepted: await services.tracing.ingest(c.get('caller'), { post: [], patch: [run] }) }, 202);
    })
    .openapi(batch, async (c) => {
      const body = c.req.valid('json');
      const runs: RunBatch = { post: (body.post ?? []).map((r) => createFromWire(r)), patch: (body.patch ?? []).map(updateFromWire) };
      return c.json({ accepted: await services.tracing.ingest(c.get('caller'), runs) }, 202);
    })
    .openapi(multipart, async (c) => {
      const parts = assembleMultipart(await readForm(c.req.raw));
      const issues: FieldIssue[] = [];
      const runs: RunBatch = {
        post: validEach(parts.post, WireRunCreate, 'post', issues).map((r) => createFromWire(r)),
        patch: validEach(parts.patch, WireRunUpdate, 'patch', issues).map(updateFromWire),
      };
      if (issues.length > 0) throw invalid(issues);
      return c.json({ accepted: await services.tracing.ingest(c.get('caller'), runs) }, 202);
    });
}

/** The parts of a multipart body by name; anything that is not multipart form data is a 415. */
async function readForm(request: Request): Promise<Record<string, unknown>> {
  if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data')) {
    throw new HangarError('unsupported_media_type', 'send the runs as multipart/form-data');
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw new HangarError('invalid_json', 'the multipart body could not be parsed');
  }
  const out: Record<string, unknown> = {};
  form.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

/** Parse each assembled run with `schema`, collecting failures as field issues at `<op>.<id>`. */
function validEach<S extends ZodType>(items: unknown[], schema: S, op: string, issues: FieldIssue[]): z.output<S>[] {
  const out: z.output<S>[] = [];
  for (const item of items) {
    const result = schema.safeParse(item);
    if (result.success) out.push(result.data);
    else {
      const id = String((item as { id?: unknown }).id ?? '?');
      for (const issue of result.error.issues) {
        issues.push({ loc: ['body', `${op}.${id}`, ...issue.path.map(String)], msg: issue.message, type: issue.code });
      }
    }
  }
  return out;
}
