// The served OpenAPI document lints clean with a real OpenAPI linter (Redocly's, its `recommended`
// rules), every operation has a unique operationId, the reference's operations keep the reference's
// ids, and servers and per-operation security are declared.
import { readFile } from 'node:fs/promises';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { createApp, openApiDocument } from '../../src/http/app.js';
import type { AppDeps } from '../../src/http/deps.js';
import { createLogger } from '../../src/logging.js';
import { surfaceOf } from '../../src/http/surface.js';

type Operation = { operationId?: string; security?: unknown[]; responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> };
const deps = {
  services: {} as AppDeps['services'],
  logger: createLogger({ level: 'silent' }),
  info: { version: '0.0.0', storage: 'embedded', role: 'all', tracing: true },
  bodyLimitBytes: 1,
  heartbeatMs: 1,
} satisfies AppDeps;
const document = openApiDocument(createApp(deps), '0.0.0') as unknown as { servers?: unknown[]; paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

describe('the OpenAPI document', () => {
  it('lints clean with Redocly’s recommended rules', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('gives every operation a unique operationId, the reference’s where it has one', async () => {
    const ids = operations.map((o) => o.op.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    const reference = JSON.parse(await readFile(new URL('../../../shared/reference/managed-deep-agents-openapi.json', import.meta.url), 'utf8').catch(() => '{"paths":{}}')) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    for (const [path, item] of Object.entries(reference.paths)) {
      const ours = `/v1/deepagents${path.replace('{threadID}', '{thread_id}')}`;
      for (const [method, op] of Object.entries(item)) expect(document.paths[ours]?.[method]?.operationId, `${method} ${ours}`).toBe(op.operationId);
    }
  });

  it('lets null through every nullable enum (a schema whose type allows null lists null in its enum)', () => {
    const broken: string[] = [];
    const walk = (node: unknown, pointer: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${pointer}/${i}`));
      if (!node || typeof node !== 'object') return;
      const schema = node as { type?: unknown; nullable?: unknown; enum?: unknown };
      const allowsNull = schema.nullable === true || schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
      if (allowsNull && Array.isArray(schema.enum) && !schema.enum.includes(null)) broken.push(pointer);
      for (const [key, value] of Object.entries(node)) walk(value, `${pointer}/${key}`);
    };
    walk(document, '#');
    expect(broken).toEqual([]);
    // The tool server's oauth_mode is absent (never null) for servers without OAuth, as the reference types it.
    const schemas = (document as unknown as { components: { schemas: Record<string, { properties?: Record<string, unknown>; type?: unknown; required?: string[] }> } }).components.schemas;
    expect(schemas.McpServer!.properties!.oauth_mode).toEqual({ $ref: '#/components/schemas/OAuthMode' });
    expect(schemas.McpServer!.required).not.toContain('oauth_mode');
    expect(schemas.OAuthMode!.type).toBe('string');
  });

  it('documents 401 and 403 in the shape the authentication layer answers with (AuthError outside the control plane)', () => {
    let checked = 0;
    for (const { path, method, op } of operations) {
      const surface = surfaceOf(path.replace(/\{[^}]+\}/g, 'x'));
      if (surface === 'public' || surface === 'controlplane') continue;
      for (const status of ['401', '403']) {
        const ref = op.responses?.[status]?.content?.['application/json']?.schema?.$ref;
        if (ref === undefined) continue; // git's endpoints describe a text body
        expect(ref, `${method} ${path} ${status}`).toBe('#/components/schemas/AuthError');
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('declares servers and, on every operation, its security', () => {
    expect(document.servers?.length).toBeGreaterThan(0);
    for (const { path, method, op } of operations) {
      expect(op.security, `${method} ${path}`).toBeDefined();
      const open = op.security!.length === 0;
      expect(open, `${method} ${path}`).toBe(!/^\/(v1|v2|langsmith)\//.test(path));
    }
  });
});
