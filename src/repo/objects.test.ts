import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { blob, buildTree, PathClashError } from './objects.js';

const run = promisify(execFile);

describe('git objects', () => {
  it('gives the ids the real git gives, for blobs and trees', async () => {
    const files = { 'AGENTS.md': 'Hello\n', 'skills/a b/SKILL.md': '---\nname: a b\n---\n', 'skills/a-b.md': 'sorts before the folder "a b/"? no: after', 'z.json': '{}' };
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-objects-'));
    try {
      const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
      await run('git', ['init', '--quiet', dir], { env });
      for (const [p, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
        await writeFile(path.join(dir, p), content);
      }
      await run('git', ['add', '-A'], { cwd: dir, env });
      const gitTree = (await run('git', ['write-tree'], { cwd: dir, env })).stdout.trim();
      expect(buildTree(files).root).toBe(gitTree);
      const gitBlob = (await run('git', ['hash-object', 'AGENTS.md'], { cwd: dir, env })).stdout.trim();
      expect(blob('Hello\n').oid).toBe(gitBlob);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stores identical files once', () => {
    const { objects } = buildTree({ 'a.md': 'same', 'b/c.md': 'same' });
    expect(objects.filter((o) => o.type === 'blob')).toHaveLength(1);
  });

  it('refuses a path that is both a file and a folder', () => {
    expect(() => buildTree({ a: 'x', 'a/b': 'y' })).toThrow(PathClashError);
  });
});
