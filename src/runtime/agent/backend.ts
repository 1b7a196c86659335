// The file system an agent sees: its definition tree under /agent/ (read-only, at the run's
// revision), /memories/ (a LangGraph store namespaced by agent, durable across threads), and a
// thread-scoped scratch area everywhere else (graph state, checkpointed with the thread) or, for an
// agent with a sandbox backend, the sandbox's own file system (where `execute` runs too).
import { InMemoryStore, type BaseStore } from '@langchain/langgraph';
import {
  CompositeBackend,
  StateBackend,
  StoreBackend,
  type BackendProtocolV2,
  type EditResult,
  type FileUploadResponse,
  type WriteResult,
} from 'deepagents';
import { principalLabel } from '../../core/store/service.js';

/** Where the definition tree is mounted in the agent's file system. */
export const DEFINITION_ROOT = '/agent/';

/** Where durable memories live. */
export const MEMORIES_ROOT = '/memories/';

/** Where memories of the calling principal live (per agent and principal). */
export const USER_MEMORIES_ROOT = '/memories/user/';

/** A backend that serves reads from `inner` and refuses every change. */
export class ReadOnlyBackend implements BackendProtocolV2 {
  constructor(
    private readonly inner: BackendProtocolV2,
    private readonly mount: string,
  ) {}

  ls(path: string) {
    return this.inner.ls(path);
  }
  read(filePath: string, offset?: number, limit?: number) {
    return this.inner.read(filePath, offset, limit);
  }
  readRaw(filePath: string) {
    return this.inner.readRaw(filePath);
  }
  grep(pattern: string, path?: string | null, glob?: string | null, maxCount?: number | null) {
    return this.inner.grep(pattern, path, glob, maxCount);
  }
  glob(pattern: string, path?: string) {
    return this.inner.glob(pattern, path);
  }
  downloadFiles(paths: string[]) {
    // Skills are discovered by downloading SKILL.md files.
    return this.inner.downloadFiles ? this.inner.downloadFiles(paths) : paths.map((path) => ({ path, content: null, error: 'file_not_found' as const }));
  }
  write(filePath: string): WriteResult {
    return { error: this.refusal(filePath) };
  }
  edit(filePath: string): EditResult {
    return { error: this.refusal(filePath) };
  }
  uploadFiles(files: Array<[string, Uint8Array]>): FileUploadResponse[] {
    return files.map(([path]) => ({ path, error: 'permission_denied' as const }));
  }

  private refusal(filePath: string): string {
    return `${this.mount.replace(/\/$/, '')}${filePath} is part of the agent's definition and is read-only; write elsewhere (for example /scratch/)`;
  }
}

/** A read-only backend over the files of one revision (paths relative to the tree root). */
export async function definitionBackend(files: Record<string, string>): Promise<ReadOnlyBackend> {
  const store = new InMemoryStore();
  const now = new Date().toISOString();
  const namespace = ['definition'];
  for (const [path, content] of Object.entries(files)) {
    await store.put(namespace, `/${path.replace(/^\/+/, '')}`, { content, mimeType: 'text/plain', created_at: now, modified_at: now });
  }
  return new ReadOnlyBackend(new StoreBackend({ store, namespace }), DEFINITION_ROOT);
}

/** The principal of the run being executed (its `configurable.principal`), as a namespace label. */
function principalPart(config: { configurable?: Record<string, unknown> | undefined } | undefined): string {
  const principal = config?.configurable?.principal;
  return principalLabel(typeof principal === 'string' && principal !== '' ? principal : 'anonymous');
}

/**
 * The composite file system of one agent. `/memories/user/` is namespaced by the run's principal
 * too, resolved per call (the built agent is shared by every run of the revision).
 */
export function agentFileSystem(options: {
  definition: ReadOnlyBackend;
  store: BaseStore;
  memoryNamespace: string[];
  /** Where every other path goes: the thread's state (default) or the agent's sandbox. */
  scratch?: BackendProtocolV2 | undefined;
}): CompositeBackend {
  return new CompositeBackend(options.scratch ?? new StateBackend(), {
    [DEFINITION_ROOT]: options.definition,
    [MEMORIES_ROOT]: new StoreBackend({ store: options.store, namespace: options.memoryNamespace }),
    [USER_MEMORIES_ROOT]: new StoreBackend({
      store: options.store,
      namespace: ({ config }) => [...options.memoryNamespace, 'user', principalPart(config)],
    }),
  });
}
