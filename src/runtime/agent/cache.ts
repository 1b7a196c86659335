// Compiled agents, reused across runs of the same revision: building a deep agent and connecting to
// its tool servers costs more than a short run. An entry is rebuilt when the revision or any of its
// tool servers' registrations change, and closed (tool server connections) after it is evicted. An
// agent built while a tool server could not be used, or whose server has said its tools changed
// since (`degraded`), serves the runs that asked for it, and the next run builds it again.
import type { BuiltAgent } from './build.js';

interface Entry {
  key: string;
  agent: Promise<BuiltAgent>;
  lastUsed: number;
  /** The agent, once built. */
  built?: BuiltAgent | undefined;
}

/** A small LRU of built agents. */
export class AgentCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly max = 64,
    /** How long an evicted agent's connections stay open for runs still using it. */
    private readonly closeGraceMs = 60_000,
  ) {}

  /** The agent for `slot` (workspace + agent) built for `key`, building it with `build` if needed. */
  get(slot: string, key: string, build: () => Promise<BuiltAgent>): Promise<BuiltAgent> {
    const hit = this.entries.get(slot);
    if (hit && hit.key === key && !hit.built?.degraded) {
      hit.lastUsed = Date.now();
      return hit.agent;
    }
    if (hit) this.retire(hit);
    const agent = build();
    const entry: Entry = { key, agent, lastUsed: Date.now() };
    this.entries.set(slot, entry);
    agent.then(
      (built) => {
        entry.built = built;
      },
      () => {},
    );
    // A failed build is not cached: the next run tries again.
    agent.catch(() => {
      if (this.entries.get(slot) === entry) this.entries.delete(slot);
    });
    if (this.entries.size > this.max) {
      const oldest = [...this.entries].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0]!;
      this.entries.delete(oldest[0]);
      this.retire(oldest[1]);
    }
    return agent;
  }

  /** The agent cached for `slot` if it was built for `key`. */
  peek(slot: string, key: string): Promise<BuiltAgent> | undefined {
    const hit = this.entries.get(slot);
    if (!hit || hit.key !== key || hit.built?.degraded) return undefined;
    hit.lastUsed = Date.now();
    return hit.agent;
  }

  /** Close every cached agent now. */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.agent.then((a) => a.close()).catch(() => {})));
  }

  private retire(entry: Entry): void {
    setTimeout(() => void entry.agent.then((a) => a.close()).catch(() => {}), this.closeGraceMs).unref();
  }
}
