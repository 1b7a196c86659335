import { describe, expect, it } from 'vitest';
import { HangarError } from '../errors.js';
import { compose, MAX_AGENT_BYTES, MAX_AGENT_FILES, MAX_FILE_BYTES } from './compose.js';

const runtime = { model: { model_id: 'openai:gpt-5.4-mini' } };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof HangarError ? error.code : 'other';
  }
  return undefined;
}

describe('compose', () => {
  const head = compose(null, {
    name: 'a',
    runtime,
    instructions: 'hi',
    tools: { tools: [{ name: 't', mcp_server_url: 'https://x.example.com' }], interrupt_config: { t: true } },
    skills: [{ name: 's', instructions: 'do' }],
  }).files;

  it('keeps omitted fields, replaces given ones wholesale, and lists changed paths', () => {
    const next = compose(head, { tools: { tools: [] } });
    expect(next.definition.tools).toEqual({ tools: [], interrupt_config: {} });
    expect(next.definition.instructions).toBe('hi');
    expect(next.definition.skills.map((s) => s.name)).toEqual(['s']);
    expect(next.changedPaths).toEqual(['tools.json']);
  });

  it('names in fields only what changed from the previous tree, not every field sent (the Console sends all on Save)', () => {
    const before = compose(null, { name: 'a', runtime, instructions: 'hi', extras: { b: 1, a: 2 } }).files;
    const all = { name: 'a', description: '', runtime, instructions: 'hi', tools: { tools: [] }, skills: [], subagents: [], extras: { a: 2, b: 1 } };
    expect(compose(before, all).fields).toEqual([]);
    expect(compose(before, { ...all, instructions: 'hello' }).fields).toEqual(['instructions']);
    expect(compose(before, { ...all, description: 'd', runtime: { model: { model_id: 'scripted:demo' } } }).fields).toEqual(['description', 'runtime']);
    // A raw file no field covers is reported as files; a raw AGENTS.md as the instructions it changes.
    expect(compose(before, { files: { 'notes.md': { content: 'n' } } }).fields).toEqual(['files']);
    expect(compose(before, { files: { 'AGENTS.md': { content: 'raw' } } }).fields).toEqual(['instructions']);
  });

  it('deletes a file given with null content, and replaces every skill when skills is given', () => {
    const withExtra = compose(head, { files: { 'notes.md': { content: 'n' } } }).files;
    expect(compose(withExtra, { files: { 'notes.md': { content: null } } }).files['notes.md']).toBeUndefined();
    const next = compose(head, { skills: [{ name: 'other' }] });
    expect(Object.keys(next.files).filter((p) => p.startsWith('skills/'))).toEqual(['skills/other/SKILL.md']);
  });

  it('enforces the per-file, per-agent and file-count limits', () => {
    expect(codeOf(() => compose(head, { instructions: 'x'.repeat(MAX_FILE_BYTES + 1) }))).toBe('agent_file_too_large');
    const many = Object.fromEntries(Array.from({ length: MAX_AGENT_FILES }, (_, i) => [`f/${i}`, { content: '' }]));
    expect(codeOf(() => compose(head, { files: many }))).toBe('agent_too_large');
    const big = Object.fromEntries(
      Array.from({ length: Math.ceil(MAX_AGENT_BYTES / MAX_FILE_BYTES) + 1 }, (_, i) => [`big/${i}`, { content: 'y'.repeat(MAX_FILE_BYTES) }]),
    );
    expect(codeOf(() => compose(head, { files: big }))).toBe('agent_too_large');
  });

  it('refuses a typed field together with a file it owns, and a create without a name or model', () => {
    expect(codeOf(() => compose(head, { skills: [], files: { 'skills/x/SKILL.md': { content: '---\nname: x\n---\n' } } }))).toBe('validation_failed');
    expect(codeOf(() => compose(head, { name: 'b', files: { 'agent.json': { content: '{}' } } }))).toBe('validation_failed');
    expect(codeOf(() => compose(null, { name: 'b' }))).toBe('validation_failed');
    expect(codeOf(() => compose(null, { runtime }))).toBe('validation_failed');
  });
});
