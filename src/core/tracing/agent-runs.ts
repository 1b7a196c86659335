// Tracing every agent run: the callback factory the runtime calls for each run. Each run gets a
// HangarTracer writing to the workspace's default project (or the project named by the thread's
// `tracing_project` metadata), marked when the thread is a test run, with its root id recorded.
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Db } from '../../db/index.js';
import type { Logger } from '../../logging.js';
import type { CallbackFactory } from '../../runtime/callbacks.js';
import { HangarTracer } from '../../tracing/tracer.js';
import type { TracingService } from './service.js';

/** Thread metadata key naming the tracing project of the thread's runs. */
export const TRACING_PROJECT_KEY = 'tracing_project';

/** The runtime callback factory that traces every run. */
export function agentRunTracing(deps: { db: Db; tracing: TracingService; logger: Logger }): CallbackFactory {
  return async ({ run, agentName, modelName, droppedTools, cancelled }): Promise<BaseCallbackHandler[]> => {
    // The claim brought the thread's metadata along; read it only for a run claimed without.
    const metadata =
      run.threadMetadata ??
      (((
        await deps.db.selectFrom('threads').select('metadata').where('id', '=', run.threadId).where('workspace_id', '=', run.workspaceId).executeTakeFirst()
      )?.metadata ?? {}) as Record<string, unknown>);
    const testRun = metadata.is_test_run === true;
    const project = typeof metadata[TRACING_PROJECT_KEY] === 'string' && metadata[TRACING_PROJECT_KEY] ? (metadata[TRACING_PROJECT_KEY] as string) : undefined;
    const log = deps.logger.child({ run_id: run.id, thread_id: run.threadId });
    const tracer = new HangarTracer({
      // The batch that starts the trace also records it as this run's (one statement).
      sink: (batch, rootRunId) => deps.tracing.record(run.workspaceId, batch, rootRunId ? { link: { runId: run.id, threadId: run.threadId, rootRunId } } : {}),
      projectName: project,
      metadata: {
        thread_id: run.threadId,
        run_id: run.id,
        assistant_id: run.agentId,
        ...(agentName ? { agent_name: agentName } : {}),
        revision: run.revision,
        attempt: run.attempt,
        model: modelName,
        is_test_run: testRun,
        // Tools the agent was configured with but did not get: part of what the run could do.
        ...(droppedTools && droppedTools.length > 0
          ? { dropped_tools: droppedTools.map((d) => ({ name: d.name, mcp_server_url: d.mcpServerUrl, reason: d.reason })) }
          : {}),
      },
      tags: testRun ? ['test-run'] : [],
      cancelled,
      rootName: agentName,
      onError: (error) => log.warn({ err: error }, 'writing the trace failed; the run continues'),
    });
    // The run's stream ends before the trace's last write is stored: a read of the trace here waits for it.
    tracer.onFinished = deps.tracing.traceWriting(run.id, () => tracer.flush());
    return [tracer];
  };
}
