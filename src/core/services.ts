// The dependency bag of core services, built once by the composition root.
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import { McpServerService } from './mcp-servers/service.js';
import type { Cipher } from './secrets/cipher.js';
import { TracingService } from './tracing/service.js';
import type { TraceExporter } from '../tracing/export/exporter.js';
import { TraceStore } from '../tracing/store.js';
import { WorkspaceService } from './workspaces/service.js';

/** Every core service. */
export interface Services {
  workspaces: WorkspaceService;
  mcpServers: McpServerService;
  tracing: TracingService;
}

/** What services are built from. */
export interface ServiceDeps {
  db: Db;
  cipher: Cipher;
  logger: Logger;
  /** Where traces go besides Hangar's own store (OTLP, LangSmith-compatible); none by default. */
  traceExporters?: TraceExporter[];
}

/** Build the services. */
export function createServices(deps: ServiceDeps): Services {
  const mcpServers = new McpServerService(deps.db, deps.cipher);
  return {
    workspaces: new WorkspaceService(deps.db),
    mcpServers,
    tracing: new TracingService({ store: new TraceStore(deps.db), mcpServers, exporters: deps.traceExporters ?? [], logger: deps.logger }),
  };
}
