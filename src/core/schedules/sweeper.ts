// The schedule tick retention sweeper: deletes ticks older than the retention setting
// (HANGAR_SCHEDULE_TICK_RETENTION_DAYS), at start and hourly, in batches so no statement holds many locks.
// It keeps what the rest of the scheduler reads: the newest tick of each schedule (its `last_run`) and
// ticks still `claimed` (a recovery adopts or starts their run).
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Logger } from '../../logging.js';
import { inBatches, retentionTask, type BackgroundTask } from '../../background.js';

const BATCH = 1000;

/** Delete old ticks until none is left to delete; returns how many went. */
export function sweepScheduleTicks(db: Db, retentionDays: number): Promise<number> {
  return inBatches(async () => {
    const deleted = await sql`
      DELETE FROM schedule_ticks WHERE id IN (
        SELECT t.id FROM schedule_ticks t
        WHERE t.tick_at < now() - make_interval(days => ${retentionDays}) AND t.state <> 'claimed'
          AND t.tick_at < (SELECT max(n.tick_at) FROM schedule_ticks n WHERE n.schedule_id = t.schedule_id)
        LIMIT ${BATCH})`.execute(db);
    return Number(deleted.numAffectedRows ?? 0);
  });
}

/** A background task that applies schedule tick retention every `intervalMs`. */
export function scheduleTickSweeper(options: { db: Db; retentionDays: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  return retentionTask({ ...options, name: 'schedule-tick-sweeper', what: 'old schedule ticks', sweep: (days) => sweepScheduleTicks(options.db, days) });
}
