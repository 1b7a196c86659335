// Exports completed runs as OpenTelemetry spans over OTLP/HTTP, following the GenAI semantic
// conventions (gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.usage.*,
// gen_ai.tool.*). The OpenTelemetry exporter does the encoding and sending; Hangar's bounded queue
// in front of it keeps a slow or dead collector away from runs.
import { type Attributes, SpanKind, SpanStatusCode, TraceFlags, type HrTime, type SpanContext } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { Logger } from '../../logging.js';
import type { RunCreate } from '../run.js';
import { extractTokenUsage } from '../tokens.js';
import type { ExportBatch, ExporterStats, TraceExporter } from './exporter.js';
import { BatchQueue } from './queue.js';

/** Options of the OTLP exporter. */
export interface OtlpExporterOptions {
  /** Full traces URL, e.g. http://collector:4318/v1/traces. */
  url: string;
  headers?: Record<string, string> | undefined;
  maxQueue: number;
  maxBatch?: number;
  flushIntervalMs?: number;
  timeoutMs?: number;
  serviceVersion?: string;
  logger: Logger;
}

type Completed = RunCreate & { endTime: Date; workspaceId: string; projectName: string | undefined };

const MAX_TEXT = 16 * 1024;

/** OTLP/HTTP span exporter of traced runs. */
export class OtlpRunExporter implements TraceExporter {
  readonly name = 'otlp';
  private readonly queue: BatchQueue<ReadableSpan>;
  private readonly exporter: OTLPTraceExporter;
  /** Runs that have started but not ended yet, waiting for their end to become a span. */
  private readonly open = new Map<string, RunCreate & { workspaceId: string; projectName: string | undefined }>();
  private droppedOpen = 0;
  private readonly resource;

  constructor(private readonly options: OtlpExporterOptions) {
    this.exporter = new OTLPTraceExporter({ url: options.url, headers: options.headers ?? {}, timeoutMillis: options.timeoutMs ?? 10_000 });
    this.resource = resourceFromAttributes({ 'service.name': 'hangar', ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}) });
    this.queue = new BatchQueue<ReadableSpan>({
      send: (spans) => this.send(spans),
      maxQueue: options.maxQueue,
      maxBatch: options.maxBatch ?? 256,
      flushIntervalMs: options.flushIntervalMs ?? 500,
      onError: (error, dropped) => options.logger.warn({ err: error, dropped }, 'OTLP trace export failed'),
    });
  }

  offer(batch: ExportBatch): void {
    const spans: ReadableSpan[] = [];
    for (const run of batch.post) {
      const full = { ...run, workspaceId: batch.workspaceId, projectName: batch.projectNames[run.id] };
      if (run.endTime) {
        this.open.delete(run.id); // reported twice, started then ended
        spans.push(this.toSpan({ ...full, endTime: run.endTime }));
      } else {
        // Runs that never end (a crashed client) must not fill the map for good: the oldest gives way.
        if (!this.open.has(run.id) && this.open.size >= this.options.maxQueue) {
          const oldest = this.open.keys().next().value;
          if (oldest !== undefined) {
            // Counted for the workspace whose run gave way.
            this.queue.count(this.open.get(oldest)?.workspaceId, 'dropped', 1, false);
            this.open.delete(oldest);
          }
          this.droppedOpen++;
        }
        this.open.set(run.id, full);
      }
    }
    for (const update of batch.patch) {
      const started = this.open.get(update.id);
      if (!started || !update.endTime) continue; // its start was dropped, or it has not ended yet
      this.open.delete(update.id);
      const merged = {
        ...started,
        endTime: update.endTime,
        ...(update.outputs !== undefined ? { outputs: update.outputs } : {}),
        ...(update.error !== undefined ? { error: update.error } : {}),
        ...(update.extra ? { extra: { ...started.extra, ...update.extra } } : {}),
        ...(update.tags ? { tags: update.tags } : {}),
      };
      spans.push(this.toSpan(merged));
    }
    if (spans.length > 0) this.queue.pushFor(batch.workspaceId, spans);
  }

  stats(workspaceId?: string): ExporterStats {
    if (workspaceId !== undefined) return this.queue.countsOf(workspaceId);
    return { queued: this.queue.length, sent: this.queue.sent, dropped: this.queue.dropped + this.droppedOpen };
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  async close(): Promise<void> {
    await this.queue.close();
    // The exporter's shutdown waits for a hung request; stopping the server must not.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exporter.shutdown().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000).unref()))]);
    clearTimeout(timer);
  }

  private send(spans: ReadableSpan[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.exporter.export(spans, (result) => (result.code === 0 ? resolve() : reject(result.error ?? new Error('OTLP export failed'))));
    });
  }

  private toSpan(run: Completed): ReadableSpan {
    const traceId = hex(run.traceId);
    const context: SpanContext = { traceId, spanId: spanId(run.id), traceFlags: TraceFlags.SAMPLED };
    const parent: SpanContext | undefined = run.parentRunId ? { traceId, spanId: spanId(run.parentRunId), traceFlags: TraceFlags.SAMPLED } : undefined;
    const startTime = hrTime(run.startTime);
    const endTime = hrTime(run.endTime);
    const durationMs = Math.max(0, run.endTime.getTime() - run.startTime.getTime());
    const { name, attributes, kind } = genAiShape(run);
    return {
      name,
      kind,
      spanContext: () => context,
      ...(parent ? { parentSpanContext: parent } : {}),
      startTime,
      endTime,
      duration: [Math.floor(durationMs / 1000), (durationMs % 1000) * 1e6],
      status: run.error ? { code: SpanStatusCode.ERROR, message: run.error.slice(0, 1024) } : { code: SpanStatusCode.OK },
      attributes,
      links: [],
      events: [],
      ended: true,
      resource: this.resource,
      instrumentationScope: { name: 'hangar.tracing' },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
}

/** Span name, kind and attributes of a run under the GenAI semantic conventions. */
function genAiShape(run: Completed): { name: string; kind: SpanKind; attributes: Attributes } {
  const metadata = (run.extra?.metadata ?? {}) as Record<string, unknown>;
  const attributes: Attributes = {
    'langsmith.run_id': run.id,
    'langsmith.trace_id': run.traceId,
    'langsmith.run_type': run.runType,
    'langsmith.dotted_order': run.dottedOrder,
    'hangar.workspace_id': run.workspaceId,
    ...(run.projectName ? { 'langsmith.project': run.projectName } : {}),
    ...(run.tags && run.tags.length > 0 ? { 'langsmith.tags': run.tags } : {}),
  };
  const threadId = metadata.thread_id ?? metadata.conversation_id;
  if (typeof threadId === 'string') attributes[ATTR_GEN_AI_CONVERSATION_ID] = threadId;
  if (run.runType === 'llm') {
    const model = str(metadata.ls_model_name) ?? str((run.extra?.invocation_params as Record<string, unknown> | undefined)?.model) ?? 'unknown';
    attributes[ATTR_GEN_AI_OPERATION_NAME] = 'chat';
    attributes[ATTR_GEN_AI_REQUEST_MODEL] = model;
    const provider = str(metadata.ls_provider);
    if (provider) attributes[ATTR_GEN_AI_PROVIDER_NAME] = provider;
    const tokens = extractTokenUsage(run.outputs, run.extra);
    if (tokens) {
      attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = tokens.promptTokens;
      attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = tokens.completionTokens;
    }
    if (run.inputs !== undefined) attributes[ATTR_GEN_AI_INPUT_MESSAGES] = text(run.inputs);
    if (run.outputs !== undefined) attributes[ATTR_GEN_AI_OUTPUT_MESSAGES] = text(run.outputs);
    return { name: `chat ${model}`, kind: SpanKind.CLIENT, attributes };
  }
  if (run.runType === 'tool') {
    attributes[ATTR_GEN_AI_OPERATION_NAME] = 'execute_tool';
    attributes[ATTR_GEN_AI_TOOL_NAME] = run.name;
    if (run.inputs !== undefined) attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = text(run.inputs);
    if (run.outputs !== undefined) attributes[ATTR_GEN_AI_TOOL_CALL_RESULT] = text(run.outputs);
    return { name: `execute_tool ${run.name}`, kind: SpanKind.INTERNAL, attributes };
  }
  if (!run.parentRunId) {
    attributes[ATTR_GEN_AI_OPERATION_NAME] = 'invoke_agent';
    attributes['gen_ai.agent.name'] = run.name;
    return { name: `invoke_agent ${run.name}`, kind: SpanKind.INTERNAL, attributes };
  }
  return { name: run.name, kind: SpanKind.INTERNAL, attributes };
}

function hex(uuid: string): string {
  return uuid.replace(/-/g, '').toLowerCase();
}

/** The last 16 hex digits of a run id: random in both v4 and v7 UUIDs (v7 begins with the time). */
function spanId(uuid: string): string {
  return hex(uuid).slice(16);
}

function hrTime(date: Date): HrTime {
  const ms = date.getTime();
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function text(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;
}
