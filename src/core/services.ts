// The dependency bag of core services, built once by the composition root.
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import { ObjectStore } from '../repo/store.js';
import { AgentService } from './agents/service.js';
import { McpServerService } from './mcp-servers/service.js';
import { ModelConfigService } from './model-configs/service.js';
import type { Cipher } from './secrets/cipher.js';
import { WorkspaceService } from './workspaces/service.js';

/** Every core service. */
export interface Services {
  workspaces: WorkspaceService;
  mcpServers: McpServerService;
  modelConfigs: ModelConfigService;
  agents: AgentService;
  /** Git objects of agent repositories (read by the smart-HTTP endpoint). */
  gitObjects: ObjectStore;
}

/** What services are built from. */
export interface ServiceDeps {
  db: Db;
  cipher: Cipher;
  logger: Logger;
}

/** Build the services. */
export function createServices(deps: ServiceDeps): Services {
  const mcpServers = new McpServerService(deps.db, deps.cipher);
  const modelConfigs = new ModelConfigService(deps.db, deps.cipher);
  const gitObjects = new ObjectStore(deps.db);
  return {
    workspaces: new WorkspaceService(deps.db),
    mcpServers,
    modelConfigs,
    agents: new AgentService(deps.db, gitObjects, mcpServers, modelConfigs),
    gitObjects,
  };
}
