// The typed view of every table. Each domain declares its tables in tables/<domain>.ts.
import type { DeploymentTables } from './tables/deployments.js';
import type { AgentTables } from './tables/agents.js';
import type { FoundationTables } from './tables/foundation.js';
import type { IntegrationTables } from './tables/integrations.js';
import type { OAuthTables } from './tables/oauth.js';
import type { RuntimeTables } from './tables/runtime.js';
import type { ScheduleTables } from './tables/schedules.js';
import type { TracingTables } from './tables/tracing.js';

export interface Database extends FoundationTables, AgentTables, RuntimeTables, OAuthTables, IntegrationTables, TracingTables, DeploymentTables, ScheduleTables {}
