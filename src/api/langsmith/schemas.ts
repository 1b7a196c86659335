// Wire shapes of the LangSmith-compatible ingestion endpoints: run reports as the `langsmith` SDK sends them.
import { z } from '@hono/zod-openapi';

const time = z.union([z.string().min(1), z.number()]).openapi({ description: 'ISO 8601 time (UTC when no zone) or epoch milliseconds.' });
const json = z.unknown().openapi({ description: 'Any JSON value.' });

const common = {
  trace_id: z.uuid().optional().openapi({ description: 'Id of the root run of the trace; the run’s own id for a root.' }),
  dotted_order: z.string().min(1).max(10_000).optional().openapi({ description: 'Path of the run in its trace: `<start><id>` segments joined by dots.' }),
  parent_run_id: z.uuid().nullish(),
  end_time: time.nullish(),
  inputs: json.optional(),
  outputs: json.optional(),
  error: z.string().nullish(),
  tags: z.array(z.string()).nullish(),
  extra: z.record(z.string(), z.unknown()).nullish().openapi({ description: 'Free-form; `extra.metadata` holds the run’s metadata.' }),
  events: z.array(z.unknown()).nullish(),
};

/** A run as first reported (`post`). */
export const WireRunCreate = z
  .object({
    id: z.uuid(),
    name: z.string().min(1).max(1000),
    run_type: z.string().min(1).max(100).openapi({ description: '`chain`, `llm`, `tool`, `retriever`, `embedding`, `prompt`, `parser`, …', example: 'chain' }),
    start_time: time.optional(),
    session_name: z.string().min(1).max(200).nullish().openapi({ description: 'Tracing project by name; created on first use. Default: the workspace’s default project.' }),
    session_id: z.uuid().nullish().openapi({ description: 'Tracing project by id (of this workspace); an id naming no project is a 404.' }),
    ...common,
  })
  .openapi('LangSmithRunCreate');

/** A later report on a run (`patch`). */
export const WireRunUpdate = z.object({ id: z.uuid(), ...common }).openapi('LangSmithRunUpdate');

/** `PATCH /runs/{run_id}` body: the id comes from the path. */
export const WireRunPatchBody = z.object(common).openapi('LangSmithRunPatch');

/** `POST /runs/batch` body. */
export const WireBatch = z
  .object({
    post: z.array(WireRunCreate).max(10_000).optional(),
    patch: z.array(WireRunUpdate).max(10_000).optional(),
  })
  .openapi('LangSmithRunBatch');

/** What an ingestion endpoint answers. */
export const IngestAccepted = z
  .object({ accepted: z.number().int().openapi({ description: 'Run reports taken (creates plus updates).' }) })
  .openapi('LangSmithIngestAccepted');

/** `GET /info`: what the SDK reads to choose how to send. */
export const LangSmithInfo = z
  .object({
    version: z.string(),
    license_expiration_time: z.null(),
    batch_ingest_config: z.object({
      use_multipart_endpoint: z.boolean(),
      size_limit: z.number().int(),
      size_limit_bytes: z.number().int(),
      scale_up_qsize_trigger: z.number().int(),
      scale_up_nthreads_limit: z.number().int(),
      scale_down_nempty_trigger: z.number().int(),
    }),
    instance_flags: z.record(z.string(), z.boolean()),
  })
  .openapi('LangSmithInfo');
