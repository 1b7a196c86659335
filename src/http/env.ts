// The per-request variables every handler can read.
import type { Caller } from '../core/caller.js';

/** Hono environment of Hangar's apps. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by the auth middleware on authenticated surfaces. */
    caller: Caller;
  };
}
