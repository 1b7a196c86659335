// README.md must stay true: every setting is documented there, and its quick start is two commands.
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { settingDefault, settings } from '../../src/config/index.js';
import { runErrorCatalogue } from '../../src/core/errors.js';
import { createMetrics } from '../../src/metrics.js';

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('documents every setting with its flag', () => {
    for (const setting of Object.values(settings) as { env: string; flag?: string }[]) {
      expect(readme).toContain(`\`${setting.env}\``);
      if (setting.flag) expect(readme).toContain(`\`--${setting.flag}\``);
    }
  });

  it('gives every setting once, with the default the code has', () => {
    const rows = new Map<string, string[]>();
    for (const line of readme.split('\n')) {
      const env = /^\| `([A-Z0-9_]+)` \|/.exec(line)?.[1];
      if (env === undefined) continue;
      expect(rows.has(env), `${env} is listed twice`).toBe(false);
      rows.set(env, line.split(' | ').map((cell) => cell.trim()));
    }
    const envs = Object.values(settings).map((s) => s.env);
    expect([...rows.keys()].filter((env) => !envs.includes(env))).toEqual([]);
    for (const setting of Object.values(settings)) {
      const documented = rows.get(setting.env)![2]!;
      const value = settingDefault(setting);
      // No single default (unset, or derived from another setting): an empty cell or a `<placeholder>`.
      if (value === undefined) expect(documented, setting.env).toMatch(/^(|`<[^>]+>[^`]*`)$/);
      else expect(documented, setting.env).toBe(`\`${value}\``);
    }
  });

  it('describes every setting in the words `hangar serve --help` prints (scripts/update-readme-settings.py rewrites the table)', () => {
    for (const line of readme.split('\n')) {
      const env = /^\| `([A-Z0-9_]+)` \|/.exec(line)?.[1];
      const setting = Object.values(settings).find((s) => s.env === env);
      if (!setting) continue;
      const meaning = line.split(' | ').slice(3).join(' | ').replace(/ \|$/, '');
      expect(meaning, setting.env).toBe(setting.description.replace(/\|/g, '\\|'));
    }
  });

  it('names every metric family of /metrics with its labels', async () => {
    const { registry } = createMetrics();
    const families = (await registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith('hangar_'));
    expect(families.length).toBeGreaterThan(10);
    for (const name of families) {
      const labels = (registry.getSingleMetric(name) as unknown as { labelNames: string[] }).labelNames;
      expect(readme).toContain(`\`${name}${labels.length > 0 ? `{${labels.join(',')}}` : ''}\``);
    }
  });

  it('opens with a quick start of exactly two commands that the package scripts back', async () => {
    const quickStart = readme.split('## Quick start')[1]!.split('\n## ')[0]!;
    const commands = [...quickStart.matchAll(/```sh\n([^`]+)```/g)].map((m) => m[1]!.trim());
    expect(commands).toEqual(['npm ci && npm start', 'npm ci && npm test']);
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBeDefined();
    expect(pkg.scripts.test).toBeDefined();
  });
});

describe('docs/', () => {
  it('give a setting the default the code has wherever they state it', async () => {
    const dir = new URL('../../docs/', import.meta.url);
    const byEnv = new Map(Object.values(settings).map((s) => [s.env, s] as const));
    const stated: string[] = [];
    for (const name of (await readdir(dir)).filter((f) => f.endsWith('.md'))) {
      const text = await readFile(new URL(name, dir), 'utf8');
      // "`HANGAR_X` (default 24, …" and the sandbox limits table's "`HANGAR_X` [120]".
      for (const m of text.matchAll(/`(HANGAR_[A-Z0-9_]+)` (?:\(default |\[)(?:`([^`]+)`|([^`),\]\s;]+))/g)) {
        const setting = byEnv.get(m[1]!);
        expect(setting, `${name}: ${m[1]} is not a setting`).toBeDefined();
        expect(`${name}: ${m[1]} = ${m[2] ?? m[3]}`).toBe(`${name}: ${m[1]} = ${settingDefault(setting!)}`);
        stated.push(m[1]!);
      }
    }
    expect(stated.length).toBeGreaterThan(10);
  });
});

describe('README.md and docs/', () => {
  it('name no HANGAR_ variable that is not a setting (or one the CLI or the tests read)', async () => {
    // Read by the client commands (src/cli/target.ts) and by test/hardening/fuzz.test.ts, not by the server.
    const others = new Set(['HANGAR_URL', 'HANGAR_API_KEY', 'HANGAR_FUZZ_REQUESTS', 'HANGAR_FUZZ_SEED']);
    const envs = new Set(Object.values(settings).map((s) => s.env));
    const dir = new URL('../../docs/', import.meta.url);
    const files: [string, string][] = [['README.md', readme]];
    for (const name of (await readdir(dir)).filter((f) => f.endsWith('.md'))) files.push([`docs/${name}`, await readFile(new URL(name, dir), 'utf8')]);
    const unknown = files.flatMap(([file, text]) => [...text.matchAll(/\bHANGAR_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]).filter((env) => !envs.has(env) && !others.has(env)).map((env) => `${file}: ${env}`));
    expect(unknown).toEqual([]);
  });
});

describe('docs/runtime.md', () => {
  it('documents every run error code', async () => {
    const runtime = await readFile(new URL('../../docs/runtime.md', import.meta.url), 'utf8');
    for (const code of Object.keys(runErrorCatalogue)) expect(runtime).toContain(`| \`${code}\` |`);
  });
});
