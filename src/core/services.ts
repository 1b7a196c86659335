// The dependency bag of core services, built once by the composition root.
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import { IntegrationService } from './integrations/service.js';
import { McpServerService } from './mcp-servers/service.js';
import { OAuthProviderService } from './oauth/providers.js';
import { OAuthService } from './oauth/service.js';
import type { Cipher } from './secrets/cipher.js';
import { WorkspaceService } from './workspaces/service.js';

/** Every core service. */
export interface Services {
  workspaces: WorkspaceService;
  mcpServers: McpServerService;
  oauthProviders: OAuthProviderService;
  oauth: OAuthService;
  /** Code-host integrations; `get(workspaceId, id)` resolves credentials for deployments. */
  integrations: IntegrationService;
}

/** What services are built from. */
export interface ServiceDeps {
  db: Db;
  cipher: Cipher;
  logger: Logger;
  /** Hangar's public base URL (OAuth redirect URIs); known only once the server listens, hence a function. */
  publicUrl?: () => string;
}

/** Build the services. */
export function createServices(deps: ServiceDeps): Services {
  const oauthProviders = new OAuthProviderService(deps.db, deps.cipher);
  return {
    workspaces: new WorkspaceService(deps.db),
    mcpServers: new McpServerService(deps.db, deps.cipher, oauthProviders),
    oauthProviders,
    oauth: new OAuthService(deps.db, deps.cipher, oauthProviders, {
      logger: deps.logger,
      publicUrl: deps.publicUrl ?? (() => 'http://127.0.0.1:8124'),
    }),
    integrations: new IntegrationService(deps.db, deps.cipher),
  };
}
