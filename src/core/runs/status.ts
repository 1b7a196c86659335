// Thread and run statuses as state machines: the allowed transitions in one table each. Every change
// of status is a guarded UPDATE (`WHERE status IN (<allowed sources>)`), so races surface as errors.

import type { RunStatus, ThreadStatus } from '../../db/tables/runtime.js';

/** Status of a thread and of a run: the column types of their tables. */
export type { RunStatus, ThreadStatus };

/** Every thread status. */
export const THREAD_STATUSES = ['idle', 'busy', 'interrupted', 'error'] as const satisfies readonly ThreadStatus[];

/** Every run status. */
export const RUN_STATUSES = ['pending', 'running', 'success', 'error', 'interrupted', 'timeout'] as const satisfies readonly RunStatus[];

/** Allowed run transitions: target ← sources. */
export const RUN_TRANSITIONS: Record<RunStatus, readonly RunStatus[]> = {
  pending: ['running'], // a lease that expired before any work hands the run back (issue 5)
  running: ['pending'],
  success: ['running'],
  error: ['pending', 'running'],
  interrupted: ['pending', 'running'],
  timeout: ['running'],
};

/** Allowed thread transitions: target ← sources. */
export const THREAD_TRANSITIONS: Record<ThreadStatus, readonly ThreadStatus[]> = {
  busy: ['idle', 'interrupted', 'error'],
  idle: ['busy', 'interrupted'],
  interrupted: ['busy'],
  error: ['busy'],
};

/** Whether a run in this status is over (it will never run again). */
export function isFinalRunStatus(status: RunStatus): boolean {
  return status === 'success' || status === 'error' || status === 'interrupted' || status === 'timeout';
}

/** Whether a run in this status holds its thread (one active run per thread). */
export function isActiveRunStatus(status: RunStatus): boolean {
  return status === 'pending' || status === 'running';
}
