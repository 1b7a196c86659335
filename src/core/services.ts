// The dependency bag of core services, built once by the composition root.
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import { ObjectStore } from '../repo/store.js';
import { AgentService } from './agents/service.js';
import { IntegrationService } from './integrations/service.js';
import { DeploymentService } from './deployments/service.js';
import type { CodeHosts, DriverRouting, TracingProjects } from './deployments/ports.js';
import { UploadService } from './deployments/uploads.js';
import { integrationCodeHosts } from './deployments/code-hosts.js';
import { McpServerService } from './mcp-servers/service.js';
import { ModelConfigService } from './model-configs/service.js';
import { OAuthProviderService } from './oauth/providers.js';
import { OAuthService } from './oauth/service.js';
import type { Cipher } from './secrets/cipher.js';
import { TracingService } from './tracing/service.js';
import type { TraceExporter } from '../tracing/export/exporter.js';
import { TraceStore } from '../tracing/store.js';
import { WorkspaceService } from './workspaces/service.js';

/** Every core service. */
export interface Services {
  workspaces: WorkspaceService;
  mcpServers: McpServerService;
  modelConfigs: ModelConfigService;
  agents: AgentService;
  /** Git objects of agent repositories (read by the smart-HTTP endpoint). */
  gitObjects: ObjectStore;
  oauthProviders: OAuthProviderService;
  oauth: OAuthService;
  /** Code-host integrations; `get(workspaceId, id)` resolves credentials for deployments. */
  integrations: IntegrationService;
  deployments: DeploymentService;
  deploymentUploads: UploadService;
  tracing: TracingService;
}

/** What services are built from. */
export interface ServiceDeps {
  db: Db;
  cipher: Cipher;
  logger: Logger;
  /** Hangar's public base URL (OAuth redirect URIs); known only once the server listens, hence a function. */
  publicUrl?: () => string;
  /** Deployments: which driver serves which source, and the other domains they use when present. */
  deploy?: { routing: DriverRouting; codeHosts?: CodeHosts; tracing?: TracingProjects };
  /** Where traces go besides Hangar's own store (OTLP, LangSmith-compatible); none by default. */
  traceExporters?: TraceExporter[];
}

/** Build the services. */
export function createServices(deps: ServiceDeps): Services {
  const oauthProviders = new OAuthProviderService(deps.db, deps.cipher);
  const mcpServers = new McpServerService(deps.db, deps.cipher, oauthProviders);
  const modelConfigs = new ModelConfigService(deps.db, deps.cipher);
  const gitObjects = new ObjectStore(deps.db);
  const integrations = new IntegrationService(deps.db, deps.cipher);
  const tracing = new TracingService({ store: new TraceStore(deps.db), mcpServers, exporters: deps.traceExporters ?? [], logger: deps.logger });
  return {
    workspaces: new WorkspaceService(deps.db),
    mcpServers,
    modelConfigs,
    agents: new AgentService(deps.db, gitObjects, mcpServers, modelConfigs),
    gitObjects,
    oauthProviders,
    oauth: new OAuthService(deps.db, deps.cipher, oauthProviders, {
      logger: deps.logger,
      publicUrl: deps.publicUrl ?? (() => 'http://127.0.0.1:8124'),
    }),
    integrations,
    deployments: new DeploymentService({
      db: deps.db,
      cipher: deps.cipher,
      logger: deps.logger,
      routing: deps.deploy?.routing ?? { driverFor: () => undefined },
      codeHosts: deps.deploy?.codeHosts ?? integrationCodeHosts(integrations),
      tracing: deps.deploy?.tracing ?? tracing,
    }),
    deploymentUploads: new UploadService(deps.db),
    tracing,
  };
}
