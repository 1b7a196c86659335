// Who is calling: the workspace and role of the API key, passed explicitly to every service call.
import { HangarError } from './errors.js';

/** A key's role in its workspace. */
export type Role = 'admin' | 'member' | 'viewer';

/** The authenticated caller of one request. */
export interface Caller {
  workspaceId: string;
  keyId: string;
  role: Role;
  /** Who the key acts for: per-principal state (user memories, OAuth tokens) is keyed by this. */
  principal: string;
  previewAccess: boolean;
  /** A key restricted to sending traces into this one tracing project (deployed applications). */
  tracesProject?: string | undefined;
}

/** Whether the role may create, change or delete resources. */
export function canWrite(role: Role): boolean {
  return role === 'admin' || role === 'member';
}

/** Whether the role may invoke tool servers, and so see their credential headers. */
export function canInvoke(role: Role): boolean {
  return role === 'admin' || role === 'member';
}

/** Throw `forbidden` unless the caller's role may change resources. */
export function requireWrite(caller: Caller): void {
  if (!canWrite(caller.role)) throw new HangarError('forbidden', `a ${caller.role} key cannot change resources`);
}

/** Throw `forbidden` unless the caller is an admin of its workspace. */
export function requireAdmin(caller: Caller, what: string): void {
  if (caller.role !== 'admin') throw new HangarError('forbidden', `only admin keys may ${what}; this is a ${caller.role} key`);
}
