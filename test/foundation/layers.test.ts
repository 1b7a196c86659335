// Layers are enforced by lint (DESIGN.md): the project's ESLint configuration refuses an import that
// climbs from a lower layer to the HTTP edge or the composition root, and accepts the allowed direction. That the code as it is obeys them is `npm run lint` (CI).
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function restricted(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${file}` });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries', () => {
  it('refuses http, api and server.ts below the edge', async () => {
    for (const dir of ['core/deployments', 'runtime', 'tracing/export', 'deploy', 'repo']) {
      const up = '../'.repeat(dir.split('/').length);
      const messages = await restricted(
        `src/${dir}/layer-probe.ts`,
        `import type { A } from '${up}api/deployments/resource-spec.js';\nimport type { B } from '${up}http/deps.js';\nimport type { C } from '${up}server.js';\nexport type D = A | B | C;\n`,
      );
      expect(messages, dir).toHaveLength(3);
    }
  });

  it('refuses core in db, and allows core → db and api → core', async () => {
    expect(await restricted('src/db/tables/probe.ts', `import type { A } from '../../core/runs/status.js';\nexport type B = A;\n`)).toHaveLength(1);
    expect(await restricted('src/core/runs/probe.ts', `import type { A } from '../../db/tables/runtime.js';\nexport type B = A;\n`)).toEqual([]);
    expect(await restricted('src/api/deployments/probe.ts', `import type { A } from '../../core/deployments/resource-rules.js';\nexport type B = A;\n`)).toEqual([]);
  });

});
