// The typed view of every table. Each domain declares its tables in tables/<domain>.ts.
import type { DeploymentTables } from './tables/deployments.js';
import type { FoundationTables } from './tables/foundation.js';

export interface Database extends FoundationTables, DeploymentTables {}
