// The file-tree format of an agent: the typed definition and the files of its git repository are two
// views of one commit. These functions are pure (no I/O) so the API, the CLI and the runtime share them.
//
// Layout:
//   agent.json                      {name, description, runtime, extras?, backend?}
//   AGENTS.md                       the instructions, verbatim
//   tools.json                      {tools, interrupt_config}
//   skills/<name>/SKILL.md          YAML front matter `name`, `description`, then the skill body
//   skills/<name>/<path>            other files of the skill
//   subagents/<name>/AGENTS.md      YAML front matter `description` (+ `model_id`), then the instructions
//   subagents/<name>/tools.json     optional tool set of the subagent
// The hosted CLI's project folders are read too: `model` in agent.json for `runtime.model`, and a
// subagent's `agent.json` ({description, model}) beside an AGENTS.md without front matter.
// Any other path is an extra file: kept in the tree, ignored by the definition.
import { isTimeZone } from '../../runtime/agent/clock.js';
import YAML from 'yaml';
import { z } from 'zod';

/** One MCP tool of an agent (element of `tools.tools`). */
export interface ToolSpec {
  name: string;
  mcp_server_url: string;
  mcp_server_name?: string;
  display_name?: string;
}

/** `tools.json`: the tools and which of them need human approval. */
export interface ToolsConfig {
  tools: ToolSpec[];
  /** `{mcp_server_url}::{tool_name}[::…]` or a bare tool name → approval required. */
  interrupt_config: Record<string, boolean>;
}

/** An inline skill: `skills/<name>/SKILL.md` plus its other files (paths relative to the skill folder). */
export interface SkillDefinition {
  name: string;
  description: string;
  instructions: string;
  files: Record<string, string>;
}

/** A subagent: `subagents/<name>/AGENTS.md` and optionally `subagents/<name>/tools.json`. */
export interface SubagentDefinition {
  name: string;
  description: string;
  /** Inherits the parent's model when absent. */
  model_id?: string;
  instructions: string;
  tools?: ToolsConfig;
}

/** The model an agent runs on: `<provider>:<model_id>` or the name of a saved model configuration. */
export interface AgentRuntime {
  model: { model_id: string };
  /** The agent's run time limit in seconds (Hangar extension); `HANGAR_RUN_TIMEOUT_MS` when absent. */
  run_timeout_seconds?: number | undefined;
  /** The IANA zone of the agent's user (the hosted `X-User-Timezone` header): a run without its own `user_timezone` uses it; UTC when absent. */
  user_timezone?: string | undefined;
}

/** The runtime object as stored: the model, and the run time limit and the user's zone only when set. */
export function runtimeOf(runtime: AgentRuntime): AgentRuntime {
  return {
    model: { model_id: runtime.model.model_id },
    ...(runtime.run_timeout_seconds !== undefined ? { run_timeout_seconds: runtime.run_timeout_seconds } : {}),
    ...(runtime.user_timezone !== undefined ? { user_timezone: runtime.user_timezone } : {}),
  };
}

/** Longest run time limit an agent may ask for: one day. */
export const MAX_RUN_TIMEOUT_SECONDS = 86_400;

/** The typed view of an agent's file tree. */
export interface AgentDefinition {
  name: string;
  description: string;
  runtime: AgentRuntime;
  instructions: string;
  tools: ToolsConfig;
  /** Sorted by name when read from files. */
  skills: SkillDefinition[];
  /** Sorted by name when read from files. */
  subagents: SubagentDefinition[];
  /** Caller-defined metadata, kept in agent.json. */
  extras: Record<string, unknown>;
  /** Backend settings as sent by the client (kept in agent.json; not interpreted by Hangar). */
  backend?: Record<string, unknown>;
}

/** A file of the tree that does not match the format; `path` names it. */
export class TreeFormatError extends Error {
  override name = 'TreeFormatError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** Which typed field of the definition a path belongs to, or `null` for an extra file. */
export type TreeSection = 'agent' | 'instructions' | 'tools' | 'skills' | 'subagents';

/** The typed field that owns `path` (so a request cannot set both a field and its file). */
export function sectionOf(path: string): TreeSection | null {
  if (path === 'agent.json') return 'agent';
  if (path === 'AGENTS.md') return 'instructions';
  if (path === 'tools.json') return 'tools';
  if (path.startsWith('skills/')) return 'skills';
  if (path.startsWith('subagents/')) return 'subagents';
  return null;
}

/** Skill and subagent names: non-blank letters, digits, spaces, underscores and hyphens. */
export const SLUG = /^[A-Za-z0-9_-](?:[A-Za-z0-9_\- ]*[A-Za-z0-9_-])?$/;

const ToolSpecSchema = z.object({
  name: z.string().min(1),
  mcp_server_url: z.string().min(1),
  mcp_server_name: z.string().optional(),
  display_name: z.string().optional(),
});

/** Shape of `tools.json` (and of the `tools` API field). */
export const ToolsConfigSchema = z.object({
  tools: z.array(ToolSpecSchema).default([]),
  interrupt_config: z.record(z.string(), z.boolean()).default({}),
});

/** A model as the hosted CLI writes it in agent.json: `<provider>:<model_id>` or `{model_id}`. */
const ModelRefSchema = z.union([z.string().min(1), z.object({ model_id: z.string().min(1) })]);
const modelIdOf = (ref: z.infer<typeof ModelRefSchema>): string => (typeof ref === 'string' ? ref : ref.model_id);

const AgentJsonSchema = z
  .object({
    name: z.string(),
    description: z.string().default(''),
    runtime: z
      .object({
        model: z.object({ model_id: z.string() }),
        run_timeout_seconds: z.number().int().positive().max(MAX_RUN_TIMEOUT_SECONDS).optional(),
        user_timezone: z.string().refine(isTimeZone, 'must be an IANA time zone name (e.g. Europe/Paris)').optional(),
      })
      .optional(),
    model: ModelRefSchema.optional(),
    extras: z.record(z.string(), z.unknown()).default({}),
    backend: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((a) => a.runtime !== undefined || a.model !== undefined, { path: ['runtime'], message: 'runtime.model.model_id is required (or model, as the hosted CLI writes it)' });

/**
 * `permissions` in agent.json, as the hosted CLI writes it: the agent's permissions (kept on the agent,
 * as the `permissions` field). Checked only where an agent.json is written, not when a stored tree is
 * read, so a tree written before the check still loads.
 */
export const AgentPermissionsSchema = z
  .object({
    identity: z.enum(['personal', 'shared']).optional(),
    visibility: z.enum(['tenant', 'user']).optional(),
    tenant_access_level: z.enum(['read', 'run', 'write']).optional(),
    shared_users: z
      .object({ read: z.array(z.string()).optional(), run: z.array(z.string()).optional(), update: z.array(z.string()).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();

/**
 * The `permissions` an agent.json sets (undefined when it has none, or is not a JSON object: the
 * tree's own check names that). Throws TreeFormatError naming agent.json when they are not valid.
 */
export function agentJsonPermissions(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('permissions' in value)) return undefined;
  const permissions = (value as { permissions: unknown }).permissions;
  if (permissions === null || permissions === undefined) return undefined;
  const result = AgentPermissionsSchema.safeParse(permissions);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new TreeFormatError('agent.json', `agent.json: ${['permissions', ...issue.path].join('.')}: ${issue.message}`);
  }
  return result.data;
}

/** A subagent's agent.json in the hosted CLI's layout. */
const SubagentJsonSchema = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  model: ModelRefSchema.optional(),
  model_id: z.string().min(1).optional(),
});

const SkillFrontMatter = z.object({ name: z.string(), description: z.string().default('') });
const SubagentFrontMatter = z.object({ description: z.string().default(''), model_id: z.string().optional() });

/** The files of a definition. Every typed part is written, `tools.json` and `AGENTS.md` even when empty. */
export function definitionToFiles(def: AgentDefinition): Record<string, string> {
  const agentJson: Record<string, unknown> = {
    name: def.name,
    description: def.description,
    runtime: runtimeOf(def.runtime),
  };
  if (Object.keys(def.extras).length > 0) agentJson.extras = def.extras;
  if (def.backend !== undefined) agentJson.backend = def.backend;
  const files: Record<string, string> = {
    'agent.json': json(agentJson),
    'AGENTS.md': def.instructions,
    'tools.json': json(toolsJson(def.tools)),
  };
  for (const skill of def.skills) {
    const dir = `skills/${skill.name}`;
    files[`${dir}/SKILL.md`] = withFrontMatter({ name: skill.name, description: skill.description }, skill.instructions);
    for (const [rel, content] of Object.entries(skill.files)) files[`${dir}/${rel}`] = content;
  }
  for (const sub of def.subagents) {
    const dir = `subagents/${sub.name}`;
    const front: Record<string, string> = { description: sub.description };
    if (sub.model_id) front.model_id = sub.model_id;
    files[`${dir}/AGENTS.md`] = withFrontMatter(front, sub.instructions);
    if (sub.tools) files[`${dir}/tools.json`] = json(toolsJson(sub.tools));
  }
  return files;
}

/** The definition of a file tree; throws TreeFormatError naming the file that does not fit. */
export function filesToDefinition(files: Record<string, string>): AgentDefinition {
  const agentText = files['agent.json'];
  if (agentText === undefined) throw new TreeFormatError('agent.json', 'agent.json is required (name, description, runtime)');
  const agent = parseJson('agent.json', agentText, AgentJsonSchema);
  const def: AgentDefinition = {
    name: agent.name,
    description: agent.description,
    runtime: runtimeOf(agent.runtime ?? { model: { model_id: modelIdOf(agent.model!) } }),
    instructions: files['AGENTS.md'] ?? '',
    tools: files['tools.json'] === undefined ? { tools: [], interrupt_config: {} } : parseTools('tools.json', files['tools.json']),
    skills: readSkills(files),
    subagents: readSubagents(files),
    extras: agent.extras,
  };
  if (agent.backend !== undefined) def.backend = agent.backend;
  return def;
}

function readSkills(files: Record<string, string>): SkillDefinition[] {
  const byName = new Map<string, SkillDefinition>();
  const others: [string, string, string][] = [];
  for (const [path, content] of Object.entries(files)) {
    if (!path.startsWith('skills/')) continue;
    const parts = path.split('/');
    const name = parts[1]!;
    if (parts.length < 3) throw new TreeFormatError(path, `${path}: a skill is a folder skills/<name>/ holding SKILL.md`);
    const rel = parts.slice(2).join('/');
    if (rel !== 'SKILL.md') {
      others.push([name, rel, content]);
      continue;
    }
    checkSlug(path, name, 'skill');
    const { front, body } = splitFrontMatter(path, content);
    const meta = SkillFrontMatter.safeParse(front);
    if (!meta.success) throw new TreeFormatError(path, `${path}: front matter needs a string "name" and "description"`);
    if (meta.data.name !== name) {
      throw new TreeFormatError(path, `${path}: front matter name "${meta.data.name}" differs from the folder name "${name}"`);
    }
    byName.set(name, { name, description: meta.data.description, instructions: body, files: {} });
  }
  for (const [name, rel, content] of others) {
    const skill = byName.get(name);
    if (!skill) throw new TreeFormatError(`skills/${name}/SKILL.md`, `skills/${name}/ has files but no SKILL.md`);
    skill.files[rel] = content;
  }
  return [...byName.values()].sort((a, b) => compare(a.name, b.name));
}

function readSubagents(files: Record<string, string>): SubagentDefinition[] {
  const byName = new Map<string, SubagentDefinition>();
  const toolFiles: [string, string][] = [];
  for (const [path, content] of Object.entries(files)) {
    if (!path.startsWith('subagents/')) continue;
    const parts = path.split('/');
    const name = parts[1]!;
    const rel = parts.slice(2).join('/');
    if (rel === 'tools.json') {
      toolFiles.push([name, content]);
      continue;
    }
    if (rel === 'agent.json') {
      if (files[`subagents/${name}/AGENTS.md`] === undefined) throw new TreeFormatError(path, `subagents/${name}/ has agent.json but no AGENTS.md`);
      continue;
    }
    if (rel !== 'AGENTS.md') {
      throw new TreeFormatError(path, `${path}: a subagent folder holds only AGENTS.md, tools.json and (as the hosted CLI writes it) agent.json`);
    }
    checkSlug(path, name, 'subagent');
    const jsonPath = `subagents/${name}/agent.json`;
    const hosted = files[jsonPath] === undefined ? undefined : parseJson(jsonPath, files[jsonPath], SubagentJsonSchema);
    if (hosted?.name !== undefined && hosted.name !== name) {
      throw new TreeFormatError(jsonPath, `${jsonPath}: name "${hosted.name}" differs from the folder name "${name}"`);
    }
    // With an agent.json beside it, AGENTS.md is the instructions; front matter is optional.
    const { front, body } = hosted && !/^\uFEFF?---\r?\n/.test(content) ? { front: {}, body: content } : splitFrontMatter(path, content);
    const meta = SubagentFrontMatter.safeParse(front);
    if (!meta.success) throw new TreeFormatError(path, `${path}: front matter needs a string "description" (and optionally "model_id")`);
    const sub: SubagentDefinition = { name, description: hosted?.description ?? meta.data.description, instructions: body };
    const model = hosted?.model_id ?? (hosted?.model !== undefined ? modelIdOf(hosted.model) : undefined) ?? meta.data.model_id;
    if (model) sub.model_id = model;
    byName.set(name, sub);
  }
  for (const [name, content] of toolFiles) {
    const path = `subagents/${name}/tools.json`;
    const sub = byName.get(name);
    if (!sub) throw new TreeFormatError(path, `subagents/${name}/ has tools.json but no AGENTS.md`);
    sub.tools = parseTools(path, content);
  }
  return [...byName.values()].sort((a, b) => compare(a.name, b.name));
}

function checkSlug(path: string, name: string, what: string): void {
  if (!SLUG.test(name)) {
    throw new TreeFormatError(path, `${path}: "${name}" is not a valid ${what} name (letters, digits, spaces, _ and -)`);
  }
}

/** `---\n<yaml>---\n<body>`; the body is kept byte for byte. */
function withFrontMatter(front: Record<string, string>, body: string): string {
  return `---\n${YAML.stringify(front)}---\n${body}`;
}

function splitFrontMatter(path: string, content: string): { front: unknown; body: string } {
  const text = content.replace(/^\uFEFF/, '');
  const open = /^---\r?\n/.exec(text);
  if (!open) throw new TreeFormatError(path, `${path}: must start with YAML front matter between "---" lines`);
  const rest = text.slice(open[0].length);
  const close = /(^|\r?\n)---[ \t]*(\r?\n|$)/.exec(rest);
  if (!close) throw new TreeFormatError(path, `${path}: the YAML front matter is not closed by a "---" line`);
  const yamlText = rest.slice(0, close.index);
  let front: unknown;
  try {
    front = YAML.parse(yamlText) ?? {};
  } catch (error) {
    throw new TreeFormatError(path, `${path}: front matter is not valid YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (typeof front !== 'object' || front === null || Array.isArray(front)) {
    throw new TreeFormatError(path, `${path}: front matter must be a YAML mapping`);
  }
  return { front, body: rest.slice(close.index + close[0].length) };
}

function parseTools(path: string, text: string): ToolsConfig {
  const parsed = parseJson(path, text, ToolsConfigSchema);
  return toolsJson(parsed);
}

function parseJson<T>(path: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TreeFormatError(path, `${path}: not valid JSON`);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new TreeFormatError(path, `${path}: ${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  return result.data;
}

/** A canonical copy of a tool set (known fields only, in a fixed order) so equal sets give equal files. */
function toolsJson(tools: ToolsConfig): ToolsConfig {
  return {
    tools: tools.tools.map((t) => ({
      name: t.name,
      mcp_server_url: t.mcp_server_url,
      ...(t.mcp_server_name !== undefined ? { mcp_server_name: t.mcp_server_name } : {}),
      ...(t.display_name !== undefined ? { display_name: t.display_name } : {}),
    })),
    interrupt_config: { ...tools.interrupt_config },
  };
}

/**
 * `agentJson` with `runtime.user_timezone` set to `zone`, its other keys kept (a hosted folder's
 * `model` becomes `runtime.model`, which it stands for). Text that is not a JSON object is returned
 * unchanged, for the tree's reading to refuse with its own words.
 */
export function stampUserTimezone(agentJson: string, zone: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(agentJson);
  } catch {
    return agentJson;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return agentJson;
  const { model, ...rest } = parsed as Record<string, unknown>;
  const runtime = rest.runtime;
  if (runtime && typeof runtime === 'object' && !Array.isArray(runtime)) return json({ ...rest, runtime: { ...runtime, user_timezone: zone } });
  const ref = ModelRefSchema.safeParse(model);
  if (runtime !== undefined || !ref.success) return agentJson;
  return json({ ...rest, runtime: { model: { model_id: modelIdOf(ref.data) }, user_timezone: zone } });
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// C0 and C1 controls, DEL, and the Unicode bidirectional formatting characters (LRM/RLM, embeddings,
// overrides, isolates, ALM).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_OR_BIDI = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

// Code points HFS+ ignores in names (git's is_hfs_dotgit): zero-width and bidirectional marks, BOM.
const HFS_IGNORABLE = /[\u200b-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/**
 * Whether a path segment names the `.git` directory on some file system, as git's own checks
 * (core.protectNTFS, core.protectHFS) see it: `.git` in any case, the NTFS short name `git~1`,
 * either followed by trailing dots and spaces or an alternate data stream (`:…`), and `.git` with
 * characters HFS+ ignores. git refuses such entries, so an agent folder must not hold them.
 */
function namesGitDir(segment: string): boolean {
  return /^(\.git|git~1)[. ]*(:.*)?$/.test(segment.replace(HFS_IGNORABLE, '').toLowerCase());
}

/** The longest file or folder name (in UTF-8 bytes) that common file systems (ext4, APFS, NTFS) accept. */
const MAX_NAME_BYTES = 255;

/** Why `path` is not an acceptable file path, or `null` when it is (relative, normalised, no `..`, no NUL). */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return 'is empty';
  if (path.length > 1024) return 'is longer than 1024 characters';
  if (path.includes('\0')) return 'contains a NUL character';
  if (path.includes('\\')) return 'contains a backslash; use / as the separator';
  if (path.startsWith('/')) return 'is absolute; paths are relative to the agent folder';
  // Control characters (newlines, escapes) and bidirectional overrides make a listing lie about a name.
  const hidden = CONTROL_OR_BIDI.exec(path);
  if (hidden) return `contains the invisible character U+${hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (control and bidirectional characters are not allowed)`;
  for (const segment of path.split('/')) {
    if (segment === '') return 'has an empty segment (// or a trailing /)';
    if (segment.trim() !== segment) return `has a segment "${segment}" with leading or trailing spaces`;
    // Git stores longer names, but no checkout (git clone, agents pull) can write them.
    const bytes = Buffer.byteLength(segment, 'utf8');
    if (bytes > MAX_NAME_BYTES) return `has a name "${segment.slice(0, 16)}…" that is ${bytes} bytes long; file systems allow ${MAX_NAME_BYTES} bytes per name`;
    if (segment === '.' || segment === '..') return `has a "${segment}" segment; paths must be normalised`;
    if (namesGitDir(segment)) {
      return segment.toLowerCase() === '.git'
        ? 'has a ".git" segment, which git repositories cannot hold'
        : `has a segment "${segment}" that names ".git" on Windows or macOS file systems, which git refuses`;
    }
  }
  return null;
}
