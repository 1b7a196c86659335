// The dependency bag of core services, built once by the composition root.
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import { DeploymentService } from './deployments/service.js';
import type { CodeHosts, DriverRouting, TracingProjects } from './deployments/ports.js';
import { UploadService } from './deployments/uploads.js';
import { McpServerService } from './mcp-servers/service.js';
import type { Cipher } from './secrets/cipher.js';
import { WorkspaceService } from './workspaces/service.js';

/** Every core service. */
export interface Services {
  workspaces: WorkspaceService;
  mcpServers: McpServerService;
  deployments: DeploymentService;
  deploymentUploads: UploadService;
}

/** What services are built from. */
export interface ServiceDeps {
  db: Db;
  cipher: Cipher;
  logger: Logger;
  /** Deployments: which driver serves which source, and the other domains they use when present. */
  deploy?: { routing: DriverRouting; codeHosts?: CodeHosts; tracing?: TracingProjects };
}

/** Build the services. */
export function createServices(deps: ServiceDeps): Services {
  return {
    workspaces: new WorkspaceService(deps.db),
    mcpServers: new McpServerService(deps.db, deps.cipher),
    deployments: new DeploymentService({
      db: deps.db,
      cipher: deps.cipher,
      logger: deps.logger,
      routing: deps.deploy?.routing ?? { driverFor: () => undefined },
      codeHosts: deps.deploy?.codeHosts,
      tracing: deps.deploy?.tracing,
    }),
    deploymentUploads: new UploadService(deps.db),
  };
}
