// The typed view of every table. Each domain declares its tables in tables/<domain>.ts.
import type { FoundationTables } from './tables/foundation.js';
import type { IntegrationTables } from './tables/integrations.js';
import type { OAuthTables } from './tables/oauth.js';

export interface Database extends FoundationTables, OAuthTables, IntegrationTables {}
