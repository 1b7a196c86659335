// The typed view of every table. Each domain declares its tables in tables/<domain>.ts.
import type { FoundationTables } from './tables/foundation.js';
import type { TracingTables } from './tables/tracing.js';

export interface Database extends FoundationTables, TracingTables {}
