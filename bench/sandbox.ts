// Benchmark of sandboxes on the local driver (bubblewrap), side by side in one run:
//   (a) a run's first `execute` on a cold sandbox (created by that command) and on a warm one, both as
//       the command's own time in the sandbox service and as the whole streamed run over HTTP;
//   (b) per-command overhead: `true` through the sandbox driver vs a plain child process (`sh -c true`);
//   (c) what 50 idle sandboxes cost on one node: processes, Hangar's memory, disk;
//   (d) the kubernetes driver's exec path: `true` through the Kubernetes API's exec (TLS, WebSocket,
//       channels, status) against the STAND-IN API server of the tests (no cluster here), which runs
//       the command with bubblewrap as the local driver does — so the difference to (b) is the cost of
//       the exec protocol, not of a real pod (a real cluster adds the API server and kubelet hops).
// `npm run bench:sandbox`. Options (environment): BENCH_SANDBOX_RUNS (default 20), BENCH_SANDBOX_IDLE (50).
// Needs bubblewrap (`apt-get install -y bubblewrap`). The last line is the figures as JSON.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHangarClient } from '../src/client/index.js';
import { collect, streamRun } from '../src/client/stream.js';
import { loadConfig } from '../src/config/index.js';
import { sandboxSpecOf } from '../src/core/agents/backend.js';
import { sandboxLimits } from '../src/sandbox/index.js';
import { KubernetesSandboxDriver } from '../src/sandbox/kubernetes/index.js';
import { startHangar } from '../src/server.js';
import { startK8sApiStandIn } from '../test/deployments/k8s-api-standin.js';

const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 20);
const IDLE = Number(process.env.BENCH_SANDBOX_IDLE ?? 50);
const UID_BASE = 330_000;

// Hangar routes console output into its log (at the bench's level, warn, console.log is dropped):
// the figures go straight to standard output.
const print = (line: string) => process.stdout.write(`${line}\n`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function plainChild(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-bench-sandbox-'));
  const adminKey = `bench_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    flags: { port: 0, dataDir },
    env: { HANGAR_BOOTSTRAP_API_KEY: adminKey, LOG_LEVEL: 'warn', HANGAR_TRACING: 'false', HANGAR_SANDBOX_UID_BASE: String(UID_BASE) },
  });
  const hangar = await startHangar(config, { announce: () => {} });
  try {
    const client = createHangarClient({ baseUrl: hangar.url, apiKey: adminKey });
    const backend = { type: 'sandbox' as const, sandbox_config: { scope: 'thread' as const } };
    const agent = await client.POST('/v1/deepagents/agents', { body: { name: 'bench', runtime: { model: { model_id: 'scripted:bench' } }, instructions: 'Bench.', backend } });
    const agentId = agent.data!.id;
    const newThread = async () => (await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } })).data!.id;
    const service = hangar.runtime.deps.sandboxes!.service;
    const spec = sandboxSpecOf(backend)!;
    // The workspace of the agent (the default one).
    const workspaceId = (await hangar.database.db.selectFrom('agents').select('workspace_id').where('id', '=', agentId).executeTakeFirstOrThrow()).workspace_id;
    const t = (threadId: string) => ({ workspaceId, agentId, threadId, spec });

    // (a) first execute: cold (the command creates the sandbox) and warm.
    const cold: number[] = [];
    const warm: number[] = [];
    const runCold: number[] = [];
    const runWarm: number[] = [];
    const execRun = async (threadId: string) => {
      const started = performance.now();
      const stream = await streamRun({ baseUrl: hangar.url, apiKey: adminKey, threadId, body: { agent_id: agentId, messages: [{ role: 'user', content: '/call execute {"command": "echo hi"}' }] } });
      await collect(stream);
      return performance.now() - started;
    };
    await execRun(await newThread()); // warm the agent cache and the process
    for (let i = 0; i < RUNS; i++) {
      const threadId = await newThread();
      let s = performance.now();
      await service.exec(t(threadId), { command: 'echo hi' });
      cold.push(performance.now() - s);
      s = performance.now();
      await service.exec(t(threadId), { command: 'echo hi' });
      warm.push(performance.now() - s);
      const runThread = await newThread();
      runCold.push(await execRun(runThread));
      runWarm.push(await execRun(runThread));
    }

    // (b) per-command overhead against a plain child process.
    const threadId = await newThread();
    const ref = await service.acquire(t(threadId));
    const driver = (service as unknown as { o: { driver: { exec(r: typeof ref, q: { command: string }): Promise<unknown> } } }).o.driver;
    const sandboxed: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < RUNS * 2; i++) {
      let s = performance.now();
      await driver.exec(ref, { command: 'true' });
      sandboxed.push(performance.now() - s);
      s = performance.now();
      await plainChild();
      plain.push(performance.now() - s);
    }

    // (c) 50 idle sandboxes.
    const rssBefore = process.memoryUsage().rss;
    const idleThreads = await Promise.all(Array.from({ length: IDLE }, () => newThread()));
    for (const id of idleThreads) await service.exec(t(id), { command: 'echo state > file.txt' });
    const rssAfter = process.memoryUsage().rss;
    const uids = execFileSync('ps', ['-e', '-o', 'uid='], { encoding: 'utf8' }).split('\n').map((l) => Number(l.trim()));
    const idleProcesses = uids.filter((u) => u >= UID_BASE && u < UID_BASE + 60_000).length;
    const disk = Number(execFileSync('du', ['-s', '-B1', path.join(dataDir, 'sandboxes')], { encoding: 'utf8' }).split('\t')[0]);

    // (d) the kubernetes driver's exec path, against the stand-in API server.
    const k8s = await startK8sApiStandIn();
    const k8sExec: number[] = [];
    let k8sStart = 0;
    try {
      const k8sDriver = new KubernetesSandboxDriver({
        kubeconfig: await k8s.writeKubeconfig(dataDir),
        namespace: 'bench',
        image: 'bench',
        cpu: '1',
        volumeSize: '1Gi',
        runAsUser: 1000,
        startTimeoutMs: 30_000,
        pollMs: 10,
        limits: sandboxLimits(config),
      });
      const k8sRef = { id: '0f0f0f0f-0000-4000-8000-00000000be4c', slot: 0 };
      await k8sDriver.unavailable(); // loads the client library (once per process), not measured
      const s0 = performance.now();
      await k8sDriver.ensure(k8sRef);
      k8sStart = performance.now() - s0;
      for (let i = 0; i < RUNS * 2; i++) {
        const s = performance.now();
        await k8sDriver.exec(k8sRef, { command: 'true' });
        k8sExec.push(performance.now() - s);
      }
      await k8sDriver.remove(k8sRef.id);
    } finally {
      await k8s.close();
    }

    const figures = {
      runs: RUNS,
      first_execute_cold_ms: round(median(cold)),
      first_execute_warm_ms: round(median(warm)),
      cold_over_warm: round(median(cold) / median(warm)),
      run_with_execute_cold_ms: round(median(runCold)),
      run_with_execute_warm_ms: round(median(runWarm)),
      command_sandboxed_ms: round(median(sandboxed)),
      command_plain_child_ms: round(median(plain)),
      sandboxed_over_plain: round(median(sandboxed) / median(plain)),
      overhead_per_command_ms: round(median(sandboxed) - median(plain)),
      idle_sandboxes: IDLE,
      idle_processes: idleProcesses,
      idle_hangar_rss_delta_mib: round((rssAfter - rssBefore) / 1024 / 1024),
      idle_disk_bytes_total: disk,
      k8s_standin_pod_start_ms: round(k8sStart),
      k8s_standin_command_ms: round(median(k8sExec)),
      k8s_exec_over_local: round(median(k8sExec) / median(sandboxed)),
      k8s_exec_overhead_per_command_ms: round(median(k8sExec) - median(sandboxed)),
    };
    print('Sandboxes on the local driver (bubblewrap); medians. The machine may be shared: treat absolute figures as noisy, ratios as the signal.');
    print(`  first execute, cold sandbox   ${figures.first_execute_cold_ms} ms   (whole streamed run: ${figures.run_with_execute_cold_ms} ms)`);
    print(`  first execute, warm sandbox   ${figures.first_execute_warm_ms} ms   (whole streamed run: ${figures.run_with_execute_warm_ms} ms)`);
    print(`  \`true\` in a sandbox           ${figures.command_sandboxed_ms} ms   vs plain child process ${figures.command_plain_child_ms} ms   (×${figures.sandboxed_over_plain}, +${figures.overhead_per_command_ms} ms)`);
    print(`  ${IDLE} idle sandboxes            ${idleProcesses} processes, Hangar RSS +${figures.idle_hangar_rss_delta_mib} MiB, ${disk} bytes on disk`);
    print(`  kubernetes driver, stand-in   \`true\` through the API's exec ${figures.k8s_standin_command_ms} ms vs ${figures.command_sandboxed_ms} ms local (×${figures.k8s_exec_over_local}, +${figures.k8s_exec_overhead_per_command_ms} ms); objects applied and pod running in ${figures.k8s_standin_pod_start_ms} ms (stand-in)`);
    print(JSON.stringify(figures));
  } finally {
    await hangar.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
