import { describe, expect, it } from 'vitest';
import { type AgentDefinition, definitionToFiles, filesToDefinition, pathProblem, sectionOf, TreeFormatError } from './tree.js';

const full: AgentDefinition = {
  name: 'research-assistant',
  description: 'Searches and summarises.',
  runtime: { model: { model_id: 'anthropic:claude-sonnet-4-6' } },
  instructions: 'You are careful.\n\n---\nCite sources.\n',
  tools: {
    tools: [{ name: 'search', mcp_server_url: 'https://tools.example.com/mcp', mcp_server_name: 'Tools', display_name: 'Search' }],
    interrupt_config: { 'https://tools.example.com/mcp::search': true },
  },
  skills: [
    { name: 'citing', description: 'How to cite: APA', instructions: '# Citing\nUse APA.\n', files: { 'examples/apa.md': 'Doe, J. (2020).\n' } },
    { name: 'writing style', description: 'multi\nline', instructions: '', files: {} },
  ],
  subagents: [
    { name: 'critic', description: 'Finds holes', model_id: 'openai:gpt-5.4-mini', instructions: 'Be harsh.', tools: { tools: [], interrupt_config: {} } },
    { name: 'helper', description: '', instructions: 'Help.\n' },
  ],
  extras: { team: 'search', priority: 2 },
};

describe('agent file tree', () => {
  it('writes the documented layout', () => {
    const files = definitionToFiles(full);
    expect(Object.keys(files).sort()).toEqual([
      'AGENTS.md',
      'agent.json',
      'skills/citing/SKILL.md',
      'skills/citing/examples/apa.md',
      'skills/writing style/SKILL.md',
      'subagents/critic/AGENTS.md',
      'subagents/critic/tools.json',
      'subagents/helper/AGENTS.md',
      'tools.json',
    ]);
    expect(files['AGENTS.md']).toBe(full.instructions);
    expect(JSON.parse(files['tools.json']!)).toEqual(full.tools);
    expect(JSON.parse(files['agent.json']!)).toEqual({
      name: full.name,
      description: full.description,
      runtime: full.runtime,
      extras: full.extras,
    });
    expect(files['skills/citing/SKILL.md']).toBe('---\nname: citing\ndescription: "How to cite: APA"\n---\n# Citing\nUse APA.\n');
    expect(files['subagents/critic/AGENTS.md']).toBe('---\ndescription: Finds holes\nmodel_id: openai:gpt-5.4-mini\n---\nBe harsh.');
  });

  it('reads back what it writes', () => {
    expect(filesToDefinition(definitionToFiles(full))).toEqual(full);
  });

  it('sorts skills and subagents by name and defaults missing optional files', () => {
    const def = filesToDefinition({
      'agent.json': JSON.stringify({ name: 'a', runtime: { model: { model_id: 'x:y' } } }),
      'skills/b/SKILL.md': '---\nname: b\ndescription: B\n---\nbody',
      'skills/a/SKILL.md': '---\nname: a\n---\n',
      'notes/readme.txt': 'an extra file',
    });
    expect(def.skills.map((s) => s.name)).toEqual(['a', 'b']);
    expect(def.skills[0]!.description).toBe('');
    expect(def.instructions).toBe('');
    expect(def.tools).toEqual({ tools: [], interrupt_config: {} });
    expect(def.description).toBe('');
    expect(def.extras).toEqual({});
  });

  it('reads a project folder as the hosted CLI writes it: model in agent.json, subagents with agent.json', () => {
    const def = filesToDefinition({
      'agent.json': JSON.stringify({ name: 'demo', agent_id: '1b7e0a52-0000-4000-8000-000000000000', model: 'anthropic:claude-sonnet-4-6', permissions: {} }),
      'subagents/helper/agent.json': JSON.stringify({ name: 'helper', description: 'Looks things up', model: 'openai:gpt-4.1' }),
      'subagents/helper/AGENTS.md': 'You look things up.\n',
      'subagents/helper/tools.json': JSON.stringify({ tools: [] }),
      'subagents/plain/agent.json': JSON.stringify({ description: 'from json' }),
      'subagents/plain/AGENTS.md': '---\ndescription: from front matter\nmodel_id: x:z\n---\nBody',
    });
    expect(def.runtime).toEqual({ model: { model_id: 'anthropic:claude-sonnet-4-6' } });
    expect(def.subagents).toEqual([
      { name: 'helper', description: 'Looks things up', model_id: 'openai:gpt-4.1', instructions: 'You look things up.\n', tools: { tools: [], interrupt_config: {} } },
      // agent.json wins where both say something; front matter fills in the rest.
      { name: 'plain', description: 'from json', model_id: 'x:z', instructions: 'Body' },
    ]);
    expect(filesToDefinition({ 'agent.json': JSON.stringify({ name: 'm', model: { model_id: 'x:y' } }) }).runtime.model.model_id).toBe('x:y');
  });

  const agentJson = JSON.stringify({ name: 'a', runtime: { model: { model_id: 'x:y' } } });
  const bad: [string, Record<string, string>, string, RegExp][] = [
    ['no agent.json', { 'AGENTS.md': 'hi' }, 'agent.json', /required/],
    ['agent.json not JSON', { 'agent.json': '{' }, 'agent.json', /not valid JSON/],
    ['agent.json without runtime', { 'agent.json': '{"name":"a"}' }, 'agent.json', /runtime/],
    ['SKILL.md without front matter', { 'agent.json': agentJson, 'skills/s/SKILL.md': '# just text' }, 'skills/s/SKILL.md', /front matter/],
    ['unclosed front matter', { 'agent.json': agentJson, 'skills/s/SKILL.md': '---\nname: s\n' }, 'skills/s/SKILL.md', /not closed/],
    ['front matter name differs', { 'agent.json': agentJson, 'skills/s/SKILL.md': '---\nname: t\n---\n' }, 'skills/s/SKILL.md', /differs/],
    ['skill file without SKILL.md', { 'agent.json': agentJson, 'skills/s/ref.md': 'x' }, 'skills/s/SKILL.md', /no SKILL.md/],
    ['file directly in skills/', { 'agent.json': agentJson, 'skills/readme.md': 'x' }, 'skills/readme.md', /folder/],
    ['tools.json wrong shape', { 'agent.json': agentJson, 'tools.json': '{"tools":[{"name":1}]}' }, 'tools.json', /tools\.0/],
    ['subagent tools.json alone', { 'agent.json': agentJson, 'subagents/s/tools.json': '{}' }, 'subagents/s/tools.json', /no AGENTS.md/],
    ['stray file in a subagent', { 'agent.json': agentJson, 'subagents/s/x.md': '' }, 'subagents/s/x.md', /only AGENTS.md/],
    ['subagent agent.json alone', { 'agent.json': agentJson, 'subagents/s/agent.json': '{}' }, 'subagents/s/agent.json', /no AGENTS.md/],
    ['subagent agent.json naming another folder', { 'agent.json': agentJson, 'subagents/s/agent.json': '{"name":"t"}', 'subagents/s/AGENTS.md': 'x' }, 'subagents/s/agent.json', /differs/],
    ['AGENTS.md without front matter and no agent.json', { 'agent.json': agentJson, 'subagents/s/AGENTS.md': 'x' }, 'subagents/s/AGENTS.md', /front matter/],
    ['agent.json with neither runtime nor model', { 'agent.json': '{"name":"a"}' }, 'agent.json', /or model/],
    ['bad skill name', { 'agent.json': agentJson, 'skills/a.b/SKILL.md': '---\nname: a.b\n---\n' }, 'skills/a.b/SKILL.md', /not a valid skill name/],
  ];
  it.each(bad)('rejects %s, naming the file', (_label, files, path, message) => {
    let caught: unknown;
    try {
      filesToDefinition(files);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TreeFormatError);
    expect((caught as TreeFormatError).path).toBe(path);
    expect((caught as TreeFormatError).message).toMatch(message);
  });

  it('assigns paths to the typed field that owns them', () => {
    expect(sectionOf('agent.json')).toBe('agent');
    expect(sectionOf('AGENTS.md')).toBe('instructions');
    expect(sectionOf('tools.json')).toBe('tools');
    expect(sectionOf('skills/a/SKILL.md')).toBe('skills');
    expect(sectionOf('subagents/a/AGENTS.md')).toBe('subagents');
    expect(sectionOf('docs/AGENTS.md')).toBeNull();
  });

  it.each([
    ['../etc/passwd', /"\.\."/],
    ['/abs', /absolute/],
    ['a//b', /empty segment/],
    ['a/./b', /"\."/],
    ['a\0b', /NUL/],
    ['.git/config', /\.git/],
    // Spellings git also refuses (core.protectNTFS, core.protectHFS): they name .git on Windows or macOS.
    ['.git./config', /names "\.git"/],
    ['.GIT../hooks/post-checkout', /names "\.git"/],
    ['a/.git. ./config', /names "\.git"/],
    ['git~1/config', /names "\.git"/],
    ['GIT~1', /names "\.git"/],
    ['.git::$INDEX_ALLOCATION/config', /names "\.git"/],
    ['.g\u200Cit/config', /names "\.git"/],
    ['.gi\u206Bt/config', /names "\.git"/],
    ['a\\b', /backslash/],
    ['', /empty/],
    ['notes\nAGENTS.md', /U\+000A/],
    ['evil\u202Etxt.md', /U\+202E/],
    [' ', /leading or trailing spaces/],
    ['docs/ a.md', /leading or trailing spaces/],
    ['docs/a.md ', /leading or trailing spaces/],
  ])('rejects the path %j', (path, problem) => {
    expect(pathProblem(path)).toMatch(problem);
  });

  it('accepts ordinary relative paths', () => {
    expect(pathProblem('skills/my skill/SKILL.md')).toBeNull();
    expect(pathProblem('.hidden/file')).toBeNull();
    expect(pathProblem('.gitignore')).toBeNull();
    expect(pathProblem('docs/.github/x.md')).toBeNull();
    expect(pathProblem('git~2/x')).toBeNull();
    expect(pathProblem('.git.md')).toBeNull();
  });
});
