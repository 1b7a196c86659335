// A thread's sandbox as the API shows it: the sandbox its commands run in (its own for a
// thread-scoped agent, the agent's shared one for an agent-scoped agent), and a reset.
import type { SandboxPorts, SandboxStatus } from '../agents/backend.js';
import { type Caller, requireWrite } from '../caller.js';
import type { ThreadService } from './service.js';

/** A thread's sandbox, or `none` when no command has run yet (it is created on first use). */
export type ThreadSandbox = { threadId: string; status: 'none' } | ({ threadId: string } & SandboxStatus);

export class ThreadSandboxService {
  constructor(
    private readonly threads: ThreadService,
    private readonly ports: SandboxPorts | undefined,
  ) {}

  async get(caller: Caller, threadId: string): Promise<ThreadSandbox> {
    const thread = await this.threads.row(caller, threadId);
    const sandbox = await this.ports?.forThread(caller.workspaceId, threadId, thread.agent_id ?? undefined);
    return sandbox ? { threadId, ...sandbox } : { threadId, status: 'none' };
  }

  /** Remove the thread's sandbox and its files (idempotent); the next command starts afresh. */
  async reset(caller: Caller, threadId: string): Promise<void> {
    requireWrite(caller);
    const thread = await this.threads.row(caller, threadId);
    const sandbox = await this.ports?.forThread(caller.workspaceId, threadId, thread.agent_id ?? undefined);
    if (sandbox) await this.ports!.remove(sandbox.id);
  }
}
