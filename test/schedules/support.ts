// Helpers of the schedule tests: wait for ticks through the API, as a user polling it would.
import type { components } from '../../src/client/schema.js';
import type { TestServer } from '../support/server.js';

export type Schedule = components['schemas']['Schedule'];
export type Tick = components['schemas']['ScheduleTick'];

/** Create a schedule through the typed client; throws with the error body when refused. */
export async function createSchedule(server: TestServer, body: components['schemas']['CreateScheduleRequest']): Promise<Schedule> {
  const res = await server.client.POST('/v1/deepagents/schedules', { body });
  if (!res.data) throw new Error(`schedule create failed: ${res.response.status} ${JSON.stringify(res.error)}`);
  return res.data;
}

/** Every tick of a schedule, oldest first. */
export async function ticksOf(server: TestServer, scheduleId: string): Promise<Tick[]> {
  const res = await server.client.GET('/v1/deepagents/schedules/{schedule_id}/runs', { params: { path: { schedule_id: scheduleId }, query: { page_size: 100 } } });
  if (!res.data) throw new Error(`ticks failed: ${res.response.status} ${JSON.stringify(res.error)}`);
  return [...res.data.items].reverse();
}

/** Poll until `check` returns a value (not undefined), or fail after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Wait until the schedule has at least `count` ticks whose runs finished, and return its ticks. */
export function ticksWithFinishedRuns(server: TestServer, scheduleId: string, count: number, timeoutMs = 30_000): Promise<Tick[]> {
  return eventually(
    async () => {
      const ticks = await ticksOf(server, scheduleId);
      const done = ticks.filter((t) => t.run && ['success', 'error', 'interrupted', 'timeout'].includes(t.run.status));
      return done.length >= count ? ticks : undefined;
    },
    timeoutMs,
    `${count} finished runs of schedule ${scheduleId}`,
  );
}

/** Sleep (only to show that nothing happens during a span of time). */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
