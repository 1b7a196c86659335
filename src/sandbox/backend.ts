// An agent's sandbox as a deepagents backend (the sandbox backend protocol): deepagents' file tools
// (ls, read_file, write_file, edit_file, glob, grep, delete) work on the sandbox's file system through
// shell commands, and `execute` runs the model's commands. The built agent is shared by every run of
// a revision, so the sandbox is resolved per call from the run's thread (LangGraph's config).
//
// Every command of the model is traced as its own run (`sandbox_execute`: command, exit code,
// duration, output cut to 4 KiB) under the tool's run, and its output is streamed as it comes as
// `custom` stream events where the client asked for them.
import { RunnableLambda } from '@langchain/core/runnables';
import { AsyncLocalStorage } from 'node:async_hooks';
import { StringDecoder } from 'node:string_decoder';
import { getConfig } from '@langchain/langgraph';
import {
  BaseSandbox,
  type ExecuteResponse,
  type FileDownloadResponse,
  type FileOperationError,
  type FileUploadResponse,
  type SandboxBackendProtocolV2,
} from 'deepagents';
import type { SandboxSpec } from '../core/agents/backend.js';
import type { ExecResult } from './driver.js';
import type { SandboxService } from './service.js';

/** Where commands start and files persist, inside every sandbox. */
export const SANDBOX_WORKDIR = '/workspace';

/** Largest file the file tools read whole (bigger ones: read a slice with `execute`). */
const MAX_DOWNLOAD_BYTES = 16 * 1024 * 1024;

/** How much of a command's output its trace keeps. */
const TRACE_OUTPUT_CHARS = 4096;

/** The agent a backend serves. */
export interface SandboxOwner {
  workspaceId: string;
  agentId: string;
  spec: SandboxSpec;
}

/** Quote `s` for /bin/sh. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function threadOfCurrentRun(): string {
  const threadId = (getConfig()?.configurable as Record<string, unknown> | undefined)?.thread_id;
  if (typeof threadId !== 'string' || threadId === '') throw new Error('a sandbox command ran outside a thread');
  return threadId;
}

/**
 * The signal of the current run (cancel, a run time limit, shutdown): a command still running when it
 * aborts is killed with everything it started, rather than going on for up to the sandbox's timeout
 * after its run ended (and changing files in a sandbox the thread's next run already uses).
 */
function signalOfCurrentRun(): AbortSignal | undefined {
  return getConfig()?.signal;
}

/** How a command ended, as the model reads it (deepagents adds the exit code line). */
export function describeResult(r: ExecResult, timeoutSeconds: number, maxOutputBytes: number): ExecuteResponse {
  let output = r.output.toString('utf8');
  if (r.stoppedBy === 'timeout') output += `\n[Command stopped: it ran longer than the sandbox's limit of ${timeoutSeconds} s]`;
  else if (r.stoppedBy === 'output_limit') output += `\n[Command stopped: its output went beyond the sandbox's limit of ${maxOutputBytes} bytes]`;
  else if (r.stoppedBy === 'aborted') output += '\n[Command stopped: the run was cancelled]';
  else if (r.stoppedBy === 'removed') output += '\n[Command stopped: its sandbox was removed while it ran (it was reset); the next command starts in a fresh one]';
  else if (r.exitCode === null && r.signal) output += `\n[Command killed by ${r.signal}]`;
  return { output, exitCode: r.exitCode, truncated: r.truncated };
}

/** File operations through shell commands in the sandbox (what BaseSandbox builds on). */
class SandboxFiles extends BaseSandbox {
  readonly id: string;

  constructor(
    private readonly service: SandboxService,
    private readonly owner: SandboxOwner,
    private readonly limits: { timeoutSeconds: number; maxOutputBytes: number },
  ) {
    super();
    this.id = `hangar-sandbox-${owner.agentId}`;
  }

  target() {
    return { ...this.owner, threadId: threadOfCurrentRun() };
  }

  /** A command of the file tools (not traced on its own: the tool's run shows it). */
  async execute(command: string): Promise<ExecuteResponse> {
    const r = await this.service.exec(this.target(), { command, signal: signalOfCurrentRun() });
    return describeResult(r, this.limits.timeoutSeconds, this.limits.maxOutputBytes);
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const out: FileUploadResponse[] = [];
    for (const [path, content] of files) {
      if (!path.startsWith('/')) {
        out.push({ path, error: 'invalid_path' });
        continue;
      }
      const q = shellQuote(path);
      const r = await this.service.exec(this.target(), {
        command: `if [ -d ${q} ]; then exit 3; fi; mkdir -p "$(dirname ${q})" 2>/dev/null; cat > ${q} || exit 4`,
        stdin: content,
        signal: signalOfCurrentRun(),
      });
      out.push({ path, error: r.exitCode === 0 ? null : r.exitCode === 3 ? 'is_directory' : 'permission_denied' });
    }
    return out;
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const out: FileDownloadResponse[] = [];
    for (const path of paths) {
      if (!path.startsWith('/')) {
        out.push({ path, content: null, error: 'invalid_path' });
        continue;
      }
      const q = shellQuote(path);
      const r = await this.service.exec(this.target(), {
        command: `if [ -d ${q} ]; then exit 3; elif [ ! -e ${q} ]; then exit 2; elif [ ! -r ${q} ]; then exit 4; fi; exec cat -- ${q}`,
        mergeStderr: false,
        maxOutputBytes: MAX_DOWNLOAD_BYTES,
        signal: signalOfCurrentRun(),
      });
      const error: FileOperationError | null =
        r.exitCode === 0 && !r.truncated ? null : r.exitCode === 2 ? 'file_not_found' : r.exitCode === 3 ? 'is_directory' : r.exitCode === 4 ? 'permission_denied' : 'invalid_path';
      out.push({ path, content: error ? null : new Uint8Array(r.output), error });
    }
    return out;
  }
}

/** Longest a streamed piece of output waits for more, and the most one `custom` event carries. */
const STREAM_FLUSH_MS = 200;
const STREAM_FLUSH_BYTES = 16 * 1024;

/**
 * A command's output as `custom` stream events: gathered, one event per 200 ms (or 16 KiB) at most
 * rather than one per write. Every event is a row of the run's event log: a command writing a byte
 * at a time would otherwise write a row per byte (its command line repeated in each), up to its
 * output limit. Characters split between two reads are kept whole.
 */
export class OutputStreamer {
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly emit: (text: string) => void) {}

  readonly push = (chunk: Buffer): void => {
    this.text += this.decoder.write(chunk);
    if (Buffer.byteLength(this.text) >= STREAM_FLUSH_BYTES) this.flush();
    else if (this.text !== '') this.timer ??= setTimeout(() => this.flush(), STREAM_FLUSH_MS);
  };

  /** The command has ended: what is left goes now. */
  end(): void {
    this.text += this.decoder.end();
    this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.text === '') return;
    const text = this.text;
    this.text = '';
    this.emit(text);
  }
}

/**
 * The sandbox backend of one agent. File operations go through `SandboxFiles`; `execute` (the
 * model's own commands) is traced and streamed.
 */
export function sandboxBackend(service: SandboxService, owner: SandboxOwner, limits: { timeoutSeconds: number; maxOutputBytes: number }): SandboxBackendProtocolV2 {
  const files = new SandboxFiles(service, owner, limits);
  // The traced run records what the trace should keep; the model gets the whole (capped) output.
  const run = async (command: string, into: { result?: ExecuteResponse }, writer: ((chunk: unknown) => void) | undefined) => {
    const streamer = writer ? new OutputStreamer((text) => writer({ sandbox_output: { command, text } })) : undefined;
    let r: ExecResult;
    try {
      r = await service.exec(files.target(), { command, signal: signalOfCurrentRun(), onOutput: streamer?.push });
    } finally {
      streamer?.end(); // before the tool's result
    }
    into.result = describeResult(r, limits.timeoutSeconds, limits.maxOutputBytes);
    const text = r.output.toString('utf8');
    return {
      exit_code: r.exitCode,
      duration_ms: r.durationMs,
      stopped_by: r.stoppedBy,
      truncated: r.truncated,
      output: text.length > TRACE_OUTPUT_CHARS ? `${text.slice(0, TRACE_OUTPUT_CHARS)}… [${text.length - TRACE_OUTPUT_CHARS} more characters]` : text,
    };
  };
  return {
    get id() {
      return files.id;
    },
    ls: (path) => files.ls(path),
    read: (filePath, offset, limit) => files.read(filePath, offset, limit),
    readRaw: (filePath) => files.readRaw(filePath),
    grep: (pattern, path, glob, maxCount) => files.grep(pattern, path ?? undefined, glob, maxCount),
    glob: (pattern, path) => files.glob(pattern, path),
    write: (filePath, content) => files.write(filePath, content),
    edit: (filePath, oldString, newString, replaceAll) => files.edit(filePath, oldString, newString, replaceAll),
    delete: (filePath) => files.delete(filePath),
    uploadFiles: (list: Array<[string, Uint8Array]>) => files.uploadFiles(list),
    downloadFiles: (paths: string[]) => files.downloadFiles(paths),
    async execute(command: string): Promise<ExecuteResponse> {
      const into: { result?: ExecuteResponse } = {};
      const writer = toolWriters.getStore();
      const traced = RunnableLambda.from((input: { command: string }) => run(input.command, into, writer)).withConfig({ runName: 'sandbox_execute', tags: ['sandbox'] });
      try {
        await traced.invoke({ command }, getConfig());
      } catch (error) {
        // The sandbox could not run it (driver unavailable, say): the model reads why, the run goes on.
        return { output: `Error: the command could not run: ${error instanceof Error ? error.message : String(error)}`, exitCode: null, truncated: false };
      }
      return into.result!;
    },
  } as SandboxBackendProtocolV2;
}

/**
 * The `custom` stream writer of the tool call being made. LangGraph hands it to tools in their
 * runtime argument, which deepagents' execute tool does not pass on to the backend; the runtime's
 * tool-call middleware puts it here (see `withToolWriter`).
 */
const toolWriters = new AsyncLocalStorage<(chunk: unknown) => void>();

/** Run a tool call with `writer` as the stream writer its sandbox commands write their output to. */
export function withToolWriter<T>(writer: ((chunk: unknown) => void) | undefined, fn: () => T): T {
  return writer ? toolWriters.run(writer, fn) : fn();
}
