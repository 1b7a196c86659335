// An agent's `backend` (agent.json): where its file tools work and whether it can run commands.
//   {"type": "state"}                       the default: files live in the thread's graph state
//   {"type": "sandbox", "sandbox_config": {scope, idle_ttl_seconds, delete_after_stop_seconds, policy_ids}}
//   {"type": "thread_scoped_sandbox"}       older clients (the reference OpenAPI's example): a thread sandbox
// The reference OpenAPI also lists `default` (= state), `agent_scoped_sandbox` and a `sandbox` key for
// the settings; they are accepted as the same shapes. Pure functions: the API, the CLI and the runtime
// share them.
import { isDeepStrictEqual } from 'node:util';
import { invalidField } from '../errors.js';

/** Backend types Hangar knows. */
export const BACKEND_TYPES = ['state', 'sandbox', 'thread_scoped_sandbox', 'default', 'agent_scoped_sandbox'] as const;

/** Sandbox scopes: one sandbox per thread, or one per agent shared by its threads. */
export const SANDBOX_SCOPES = ['thread', 'agent'] as const;

/** Default idle time before a sandbox is stopped. */
export const DEFAULT_IDLE_TTL_SECONDS = 30 * 60;
/** Default time a stopped sandbox (its files) is kept before it is removed. */
export const DEFAULT_DELETE_AFTER_STOP_SECONDS = 7 * 24 * 3600;

/**
 * The one sandbox policy Hangar knows: the sandbox may reach public network addresses (kubernetes
 * driver: an egress NetworkPolicy; the local driver has no network to offer and ignores it). Other
 * ids are accepted and stored, and grant nothing.
 */
export const ALLOW_NETWORK_POLICY = 'allow-network';

/** The sandbox an agent runs in, as the runtime uses it. */
export interface SandboxSpec {
  scope: (typeof SANDBOX_SCOPES)[number];
  idleTtlSeconds: number;
  deleteAfterStopSeconds: number;
  /** Accepted and stored; only `allow-network` (ALLOW_NETWORK_POLICY) grants something, and only on the kubernetes driver. */
  policyIds: string[];
}

const CONFIG_KEYS = ['scope', 'idle_ttl_seconds', 'delete_after_stop_seconds', 'policy_ids'];

/** Throw a 422 naming the field when `backend` is not a backend Hangar knows. */
export function checkBackend(backend: unknown, loc: (string | number)[] = ['backend']): void {
  if (backend === null || typeof backend !== 'object' || Array.isArray(backend)) throw invalidField(loc, 'must be an object such as {"type": "state"}');
  const b = backend as Record<string, unknown>;
  const type = b.type ?? 'state';
  if (typeof type !== 'string' || !(BACKEND_TYPES as readonly string[]).includes(type)) {
    throw invalidField(
      [...loc, 'type'],
      `${JSON.stringify(b.type)} is not a backend type; use "state" (the default), "sandbox" (with sandbox_config) or "thread_scoped_sandbox"`,
    );
  }
  for (const key of Object.keys(b)) {
    if (!['type', 'sandbox_config', 'sandbox'].includes(key)) throw invalidField([...loc, key], `unknown field; a backend has type and sandbox_config`, 'extra_forbidden');
  }
  const isSandbox = type !== 'state' && type !== 'default';
  for (const key of ['sandbox_config', 'sandbox'] as const) {
    const config = b[key];
    if (config === undefined || config === null) continue;
    if (!isSandbox) throw invalidField([...loc, key], `only a sandbox backend has ${key}; this backend is "${type}"`);
    checkConfig(config, [...loc, key], type);
  }
  // The reference's `sandbox` and `sandbox_config` name one setting; the runtime reads sandbox_config
  // first, so two different values would silently drop one.
  if (b.sandbox !== undefined && b.sandbox !== null && b.sandbox_config !== undefined && b.sandbox_config !== null && !isDeepStrictEqual(b.sandbox, b.sandbox_config)) {
    throw invalidField([...loc, 'sandbox'], 'sandbox and sandbox_config are two names of the same settings and disagree; send one of them');
  }
}

function checkConfig(config: unknown, loc: (string | number)[], type: string): void {
  if (typeof config !== 'object' || Array.isArray(config)) throw invalidField(loc, 'must be an object');
  const c = config as Record<string, unknown>;
  for (const key of Object.keys(c)) {
    if (!CONFIG_KEYS.includes(key)) throw invalidField([...loc, key], `unknown field; sandbox settings are ${CONFIG_KEYS.join(', ')}`, 'extra_forbidden');
  }
  if (c.scope !== undefined) {
    if (!(SANDBOX_SCOPES as readonly unknown[]).includes(c.scope)) throw invalidField([...loc, 'scope'], `${JSON.stringify(c.scope)} is not a scope; use "thread" or "agent"`);
    const fixed = type === 'thread_scoped_sandbox' ? 'thread' : type === 'agent_scoped_sandbox' ? 'agent' : undefined;
    if (fixed && c.scope !== fixed) throw invalidField([...loc, 'scope'], `a ${type} backend has scope "${fixed}"`);
  }
  for (const key of ['idle_ttl_seconds', 'delete_after_stop_seconds']) {
    const v = c[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 10 * 365 * 24 * 3600) {
      throw invalidField([...loc, key], 'must be a whole number of seconds, 0 or more (at most ten years)');
    }
  }
  if (c.policy_ids !== undefined) {
    if (!Array.isArray(c.policy_ids) || c.policy_ids.some((p) => typeof p !== 'string' || p === '')) {
      throw invalidField([...loc, 'policy_ids'], 'must be a list of non-empty strings');
    }
  }
}

/** The sandbox of a (checked) backend, or undefined for the state backend (also for anything unknown). */
export function sandboxSpecOf(backend: Record<string, unknown> | null | undefined): SandboxSpec | undefined {
  if (!backend) return undefined;
  const type = backend.type;
  if (type !== 'sandbox' && type !== 'thread_scoped_sandbox' && type !== 'agent_scoped_sandbox') return undefined;
  const raw = (backend.sandbox_config ?? backend.sandbox ?? {}) as Record<string, unknown>;
  const scope = type === 'agent_scoped_sandbox' ? 'agent' : type === 'thread_scoped_sandbox' ? 'thread' : raw.scope === 'agent' ? 'agent' : 'thread';
  const seconds = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback);
  return {
    scope,
    idleTtlSeconds: seconds(raw.idle_ttl_seconds, DEFAULT_IDLE_TTL_SECONDS),
    deleteAfterStopSeconds: seconds(raw.delete_after_stop_seconds, DEFAULT_DELETE_AFTER_STOP_SECONDS),
    policyIds: Array.isArray(raw.policy_ids) ? raw.policy_ids.filter((p): p is string => typeof p === 'string') : [],
  };
}

/** A sandbox as `GET /v1/deepagents/threads/{thread_id}/sandbox` shows it. */
export interface SandboxStatus {
  id: string;
  scope: 'thread' | 'agent';
  driver: string;
  status: 'running' | 'stopped';
  createdAt: Date;
  lastUsedAt: Date;
  stoppedAt: Date | null;
  diskBytes: number | null;
  commands: number;
  idleTtlSeconds: number;
  deleteAfterStopSeconds: number;
}

/** What the API needs of the sandbox service (src/sandbox). */
export interface SandboxPorts {
  /** The sandbox a thread's commands run in (its own, or its agent's), or undefined when none. */
  forThread(workspaceId: string, threadId: string, agentId: string | undefined): Promise<SandboxStatus | undefined>;
  /** Remove a sandbox and its files; the next command starts a fresh one. */
  remove(id: string): Promise<void>;
}
