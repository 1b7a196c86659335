// The container image and the Kubernetes base, checked as far as this machine allows: there is no
// Docker engine and no kustomize binary here. The kustomize base uses only `resources` and `labels`,
// which the test applies itself (what `kubectl kustomize kubernetes/` does for such a base), then
// validates every object against the Kubernetes schemas (kubernetes-models) and checks what
// operators rely on. The Dockerfile is parsed and checked for its properties, and its build stage is
// replayed in a folder (its COPYs and RUNs, this checkout's node_modules for its `npm ci`).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: any;
}

/** Render the base: its resources in order, with the kustomization's labels added. */
async function render(): Promise<Obj[]> {
  const dir = path.join(ROOT, 'kubernetes');
  const k = parseYaml(await readFile(path.join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[]; labels?: { pairs: Record<string, string> }[] };
  expect(Object.keys(k).sort()).toEqual(['apiVersion', 'kind', 'labels', 'resources']); // nothing this render would ignore
  const out: Obj[] = [];
  for (const file of k.resources) {
    for (const doc of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as Obj;
      for (const l of k.labels ?? []) obj.metadata.labels = { ...obj.metadata.labels, ...l.pairs };
      out.push(obj);
    }
  }
  return out;
}

const models: Record<string, new (o: never) => { validate(): void }> = { Deployment, Service, PodDisruptionBudget };

describe('kubernetes/ (kustomize base)', () => {
  it('renders objects valid against the Kubernetes schemas', async () => {
    const objects = await render();
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'Deployment/hangar-api',
      'Deployment/hangar-worker',
      'PodDisruptionBudget/hangar-api',
      'PodDisruptionBudget/hangar-worker',
      'Service/hangar',
    ]);
    for (const o of objects) {
      const Model = models[o.kind]!;
      expect(() => new Model(o as never).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
    }
    // A field the schema does not know is refused (the validation is not vacuous).
    const bad = structuredClone(objects.find((o) => o.kind === 'Deployment')!);
    bad.spec.replicas = 'two';
    expect(() => new Deployment(bad as never).validate()).toThrow();
  });

  it('runs the API and the workers with probes, resources and secrets by reference; the PDBs and Service select them', async () => {
    const objects = await render();
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    for (const d of deployments) {
      const role = d.metadata.name.replace('hangar-', '');
      const pod = d.spec.template;
      const c = pod.spec.containers[0];
      expect(c.env).toContainEqual({ name: 'HANGAR_ROLE', value: role });
      expect(c.livenessProbe.httpGet.path).toBe('/ok');
      expect(c.readinessProbe.httpGet.path).toBe('/ready');
      expect(c.resources.requests.cpu).toBeDefined();
      expect(c.resources.requests.memory).toBeDefined();
      expect(c.resources.limits.memory).toBeDefined();
      expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
      for (const name of ['DATABASE_URL', 'HANGAR_SECRET_KEY']) {
        expect(c.env.find((e: { name: string }) => e.name === name)).toEqual({ name, valueFrom: { secretKeyRef: { name: 'hangar', key: name } } });
      }
      // The pod labels satisfy the selector, and one PDB covers each role.
      const labels = pod.metadata.labels as Record<string, string>;
      expect(labels).toMatchObject(d.spec.selector.matchLabels);
      const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === d.metadata.name)!;
      expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
    }
    expect(objects.some((o) => o.kind === 'Secret')).toBe(false); // secrets are the operator's, by reference
    const service = objects.find((o) => o.kind === 'Service')!;
    expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': 'hangar', 'app.kubernetes.io/component': 'api' });
  });
});

/** The Dockerfile: its text, its instructions (continuation lines joined, comments dropped), and those by stage. */
async function dockerfile(): Promise<{ text: string; lines: string[]; stages: string[][] }> {
  const text = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const stages: string[][] = [];
  for (const l of lines) {
    if (/^FROM /i.test(l)) stages.push([]);
    stages.at(-1)!.push(l);
  }
  return { text, lines, stages };
}

describe('Dockerfile', () => {
  it('builds the Console into the image: its build stage, replayed outside Docker, makes the dist/ the final image copies', { timeout: 600_000 }, async () => {
    const { stages } = await dockerfile();
    const final = stages.at(-1)!;
    const distCopy = final.find((l) => /^COPY --from=\S+ (--\S+ )*\/app\/dist /.test(l))!;
    expect(distCopy).toBeDefined();
    const from = distCopy.match(/--from=(\S+)/)![1]!;
    const build = stages.find((s) => new RegExp(`^FROM \\S+ AS ${from}$`, 'i').test(s[0]!))!;
    expect(build.find((l) => /^WORKDIR /.test(l))).toBe('WORKDIR /app');
    // No Docker engine here: the stage's COPYs and RUNs are replayed in a folder standing for /app,
    // with this checkout's node_modules standing for its `npm ci`.
    const app = await mkdtemp(path.join(os.tmpdir(), 'hangar-image-'));
    try {
      await symlink(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
      for (const l of build.slice(1)) {
        if (/^COPY /.test(l)) {
          const parts = l.split(/\s+/).slice(1).filter((p) => !p.startsWith('--'));
          const dest = path.join(app, parts.at(-1)!);
          const intoFolder = parts.length > 2 || parts.at(-1)!.endsWith('/');
          for (const src of parts.slice(0, -1)) await cp(path.join(ROOT, src), intoFolder ? path.join(dest, path.basename(src)) : dest, { recursive: true });
        } else if (/^RUN /.test(l) && !/^RUN npm ci\b/.test(l)) {
          await promisify(execFile)('sh', ['-c', l.slice(4)], { cwd: app, maxBuffer: 64 * 1024 * 1024 });
        }
      }
      expect(existsSync(path.join(app, 'dist/cli/main.js')), 'dist/cli/main.js').toBe(true);
      // `hangar serve` answers `/` with the Console from dist/console/ (else a 503 "not built").
      expect(existsSync(path.join(app, 'dist/console/index.html')), 'dist/console/index.html').toBe(true);
    } finally {
      await rm(app, { recursive: true, force: true });
    }
  });

  it('is multi-stage, installs production dependencies only, runs as a non-root user, and copies what exists', async () => {
    const { text, lines, stages } = await dockerfile();
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const final = stages.at(-1)!;
    const user = final.filter((l) => /^USER /.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)(:|$)/);
    expect(final.indexOf(user!)).toBeGreaterThan(final.findLastIndex((l) => /^RUN /.test(l))); // nothing runs as root after it
    // node_modules of the final image come from a stage that installed with --omit=dev.
    const from = final.find((l) => /^COPY --from=\S+ .*node_modules/.test(l))!.match(/--from=(\S+)/)![1]!;
    const source = stages.find((s) => new RegExp(`^FROM \\S+ AS ${from}$`, 'i').test(s[0]!))!;
    expect(source.some((l) => /npm ci --omit=dev/.test(l))).toBe(true);
    expect(lines.some((l) => /npm install/.test(l))).toBe(false);
    // External PostgreSQL: the image documents DATABASE_URL and starts the server.
    expect(text).toContain('DATABASE_URL');
    expect(final).toContain('CMD ["serve"]');
    for (const l of lines.filter((x) => /^COPY /.test(x) && !x.includes('--from='))) {
      const parts = l.split(/\s+/).filter((p) => !p.startsWith('--'));
      for (const src of parts.slice(1, -1)) expect(existsSync(path.join(ROOT, src)), src).toBe(true);
    }
  });
});
