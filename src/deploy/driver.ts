// What a deployment driver does for the reconciler: build a revision, start it, stop it, tear a
// deployment down. Drivers know nothing of HTTP or of revision statuses.
import type { DeploymentSecret, ResourceSpec, SecretReference, Source, SourceConfig, SourceRevisionConfig } from '../core/deployments/types.js';

/** The deployment and revision a driver works on. */
export interface DriverTarget {
  deployment: {
    id: string;
    workspaceId: string;
    name: string;
    source: Source;
    sourceConfig: SourceConfig;
    secretReferences: SecretReference[] | null;
  };
  revision: {
    id: string;
    seq: number;
    sourceRevisionConfig: SourceRevisionConfig;
    resourceSpec: ResourceSpec | null;
    secrets: DeploymentSecret[];
  };
}

/**
 * One stream of output into a revision's log (a process's stdout, or its stderr). Each is redacted on
 * its own: the end of a piece that could begin a secret waits for that stream's next piece, so other
 * output written between the two halves (the other stream, another process, Hangar's messages) does
 * not separate them. `end()` once the stream is over (the process is gone) gives out what was held.
 */
export interface LogStream {
  write(text: string): void;
  end(): void;
}

/** A target plus where output goes and when to give up. */
export interface DriverContext extends DriverTarget {
  /** Append Hangar's own messages to the revision's build or deploy log. */
  log(kind: 'build' | 'deploy', text: string): void;
  /** A new stream into the revision's build or deploy log, for one stream of a process's output. */
  stream(kind: 'build' | 'deploy'): LogStream;
  /** Aborted when the work must stop (revision superseded or interrupted, lease lost, shutdown). */
  signal: AbortSignal;
}

/** What a build produced. */
export interface BuildResult {
  commitSha?: string | undefined;
}

/** Where a healthy revision answers. */
export interface DeployResult {
  /** Internal URL of the running revision (the stable proxy forwards to it). */
  runtimeUrl: string | null;
  imageVersion: string | null;
}

/** A deployment driver. */
export interface Driver {
  readonly name: 'local' | 'kubernetes';
  /**
   * Whether running revisions live inside this Hangar process (so a process must keep hosting
   * the active revision, and another takes over when it goes away).
   */
  readonly hostsProcesses: boolean;
  /** Fetch, install and build. Throws a DriverFailure (or anything) to fail the build. */
  build(ctx: DriverContext): Promise<BuildResult>;
  /**
   * Create the deployment's database if it does not exist yet (idempotent). It belongs to the
   * deployment: every revision uses it, and only teardown removes it.
   */
  ensureDatabase(ctx: DriverContext): Promise<void>;
  /** Start the revision and resolve once it is healthy; the previous revision keeps serving meanwhile. */
  deploy(ctx: DriverContext): Promise<DeployResult>;
  /**
   * Make a deployed (healthy) revision the one that serves: the previous one is drained and
   * stopped, and the new one takes over the database. Nothing is refused meanwhile.
   */
  promote(ctx: DriverContext): Promise<void>;
  /** Stop a revision that no longer serves (idempotent). */
  stop(deploymentId: string, revisionId: string): Promise<void>;
  /** Remove everything of a deployment (its revisions already stopped). */
  teardown(target: DriverTarget['deployment']): Promise<void>;
  /**
   * Deployments this process keeps something of (a front port, a directory): those deleted through
   * another process are then forgotten here. Only drivers that host processes keep anything.
   */
  localDeployments?(): Promise<string[]>;
  /** Remove what this process keeps of a deployment deleted through another process (idempotent). */
  forget?(deploymentId: string): Promise<void>;
  /** Stop everything this process runs (shutdown). */
  close(): Promise<void>;
}

/** An expected failure of a build or deploy, with a message for the revision's status. */
export class DriverFailure extends Error {
  override name = 'DriverFailure';
}

/**
 * A deploy failed after the previous revision had stopped for the switch-over, and the previous one
 * did not start again either: nothing serves the deployment (its status becomes UNKNOWN, not READY).
 */
export class NothingServes extends DriverFailure {
  override name = 'NothingServes';
}

/** Why `signal` was aborted, as a sentence for a log (the reason given to abort()). */
export function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'stopped';
}
