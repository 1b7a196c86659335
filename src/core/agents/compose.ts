// Applying a create or update request to an agent's file tree: typed fields and raw files are two ways
// to write the same tree, so each request is turned into the next tree, then read back as a definition.
import { HangarError, invalid, invalidField } from '../errors.js';
import {
  agentJsonPermissions,
  type AgentDefinition,
  definitionToFiles,
  filesToDefinition,
  pathProblem,
  runtimeOf,
  type AgentRuntime,
  sectionOf,
  SLUG,
  stampUserTimezone,
  type ToolsConfig,
  TreeFormatError,
  type TreeSection,
} from './tree.js';

/** Largest single file, in bytes of UTF-8. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Largest agent: all files together, in bytes of UTF-8. */
export const MAX_AGENT_BYTES = 16 * 1024 * 1024;
/** Most files in one agent. */
export const MAX_AGENT_FILES = 5000;

/** A tool set as the API accepts it: a missing part is empty. */
export interface ToolsInput {
  tools?: ToolsConfig['tools'] | undefined;
  interrupt_config?: ToolsConfig['interrupt_config'] | undefined;
}

/** A skill as the API accepts it. */
export interface SkillInput {
  type?: 'inline' | undefined;
  name: string;
  description?: string | undefined;
  instructions?: string | undefined;
  files?: Record<string, string> | undefined;
}

/** A subagent as the API accepts it. */
export interface SubagentInput {
  name: string;
  description?: string | undefined;
  model_id?: string | undefined;
  instructions?: string | undefined;
  tools?: ToolsInput | undefined;
}

/** The agent fields of a create or update request (wire names). Absent fields keep their values. */
export interface AgentInput {
  name?: string | undefined;
  description?: string | undefined;
  runtime?: AgentRuntime | undefined;
  instructions?: string | undefined;
  tools?: ToolsInput | undefined;
  subagents?: SubagentInput[] | undefined;
  skills?: SkillInput[] | undefined;
  extras?: Record<string, unknown> | undefined;
  backend?: Record<string, unknown> | undefined;
  /** Raw files by path; `content: null` deletes the file (a Hangar addition). */
  files?: Record<string, { content?: string | null | undefined }> | undefined;
  /** The `X-User-Timezone` header: stamped into `runtime.user_timezone` over what `runtime` says. */
  user_timezone?: string | undefined;
}

/** The result of applying a request: the next tree, its definition and what changed. */
export interface Composed {
  files: Record<string, string>;
  definition: AgentDefinition;
  changedPaths: string[];
  /**
   * Fields whose value changed from the previous tree (not those merely sent: the Console sends every
   * field on Save), then `files` when files no field covers changed; for the commit message.
   */
  fields: string[];
  /** The paths the request sent as raw files (so a problem found in them can name the file). */
  rawPaths: Set<string>;
  /** `permissions` of an agent.json the request sent raw (the hosted layout), checked. */
  permissions?: Record<string, unknown>;
}

const FIELD_SECTION: Record<string, TreeSection> = {
  name: 'agent',
  description: 'agent',
  runtime: 'agent',
  extras: 'agent',
  backend: 'agent',
  instructions: 'instructions',
  tools: 'tools',
  skills: 'skills',
  subagents: 'subagents',
};

const SECTION_FILE: Record<TreeSection, string> = {
  agent: 'agent.json',
  instructions: 'AGENTS.md',
  tools: 'tools.json',
  skills: 'skills/…',
  subagents: 'subagents/…',
};

/** Longest agent name, as the `name` field allows it. */
export const MAX_NAME_LENGTH = 200;

/**
 * The tree after `input` is applied to `current` (`null` on create). Throws a 422 naming the field or
 * file at fault, or a 413 naming the file or limit; it never touches storage.
 */
export function compose(current: Record<string, string> | null, input: AgentInput): Composed {
  const given = (Object.keys(FIELD_SECTION) as (keyof AgentInput)[]).filter((f) => input[f] !== undefined);
  const typedSections = new Set(given.map((f) => FIELD_SECTION[f]!));
  checkTypedInput(input);
  const rawPaths = checkRawFiles(input.files ?? {}, typedSections, given);

  if (current === null) {
    if (input.name === undefined) throw invalidField(['name'], 'field required', 'missing');
    if (input.runtime === undefined) throw invalidField(['runtime', 'model', 'model_id'], 'field required: the model the agent runs on', 'missing');
    // A new agent always has AGENTS.md and tools.json: from the typed field, a raw file, or empty.
    if (!rawPaths.has('AGENTS.md')) typedSections.add('instructions');
    if (!rawPaths.has('tools.json')) typedSections.add('tools');
  }

  const next: Record<string, string> = { ...(current ?? {}) };
  for (const [path, entry] of Object.entries(input.files ?? {})) {
    if (entry.content === null || entry.content === undefined) delete next[path];
    else next[path] = entry.content;
  }

  if (typedSections.size > 0) {
    const base = current === null ? emptyDefinition() : readTree(current);
    const merged = mergeTyped(base, input);
    const generated = definitionToFiles(merged);
    for (const path of Object.keys(next)) {
      const s = sectionOf(path);
      if (s && typedSections.has(s)) delete next[path];
    }
    for (const [path, content] of Object.entries(generated)) {
      const s = sectionOf(path);
      if (s && typedSections.has(s)) next[path] = content;
    }
  }

  // The header's zone goes into agent.json whichever way it was written (typed fields or the raw file).
  if (input.user_timezone !== undefined && next['agent.json'] !== undefined) next['agent.json'] = stampUserTimezone(next['agent.json'], input.user_timezone);
  checkSizes(next);
  checkCollisions(current ?? {}, next);
  const definition = readTree(next);
  // A name sent in agent.json obeys the rules of the `name` field (the Console, CLI and LangGraph
  // clients show it as the agent's name).
  if (rawPaths.has('agent.json')) {
    if (definition.name.trim() === '') throw invalidField(['files', 'agent.json'], 'agent.json: "name" must not be blank');
    if (definition.name.length > MAX_NAME_LENGTH) throw invalidField(['files', 'agent.json'], `agent.json: "name" must be at most ${MAX_NAME_LENGTH} characters`);
  }
  const permissions = rawPaths.has('agent.json') ? filePermissions(next['agent.json']!) : undefined;
  const before = current ?? {};
  const changedPaths = [...new Set([...Object.keys(before), ...Object.keys(next)])]
    .filter((p) => before[p] !== next[p])
    .sort();
  const fields = current === null ? given : changedFields(readTree(current), definition);
  // Files no field's value shows changed: outside the definition, or under skills/ or subagents/ (which
  // may hold files their definitions do not read). agent.json, AGENTS.md and tools.json are read
  // whole, so a rewrite that leaves their fields' values as they were (key order) is no change.
  const unexplained = (p: string) => {
    const s = sectionOf(p);
    return !s || ((s === 'skills' || s === 'subagents') && !fields.includes(s));
  };
  if (current !== null && changedPaths.some(unexplained)) fields.push('files');
  return { files: next, definition, changedPaths, fields, rawPaths, ...(permissions ? { permissions } : {}) };
}

/**
 * The permissions an agent gets from a request: the `permissions` field, else those of the agent.json it
 * sent (the hosted CLI's layout); undefined keeps the agent's. Both, different, is a 422 naming both.
 */
export function requestPermissions(field: Record<string, unknown> | undefined, composed: Composed): Record<string, unknown> | undefined {
  if (field !== undefined && composed.permissions !== undefined && stable(field) !== stable(composed.permissions)) {
    throw invalidField(['permissions'], 'differs from the permissions in files["agent.json"]; send them in one place');
  }
  return field ?? composed.permissions;
}

function filePermissions(text: string): Record<string, unknown> | undefined {
  try {
    return agentJsonPermissions(text);
  } catch (error) {
    if (error instanceof TreeFormatError) throw invalidField(['files', error.path], error.message);
    throw error;
  }
}

/**
 * A validation error of the definition as the request sent it: a problem of a part that came from a
 * raw file (`files["agent.json"]`, `files["tools.json"]`, `files["subagents/<name>/…"]`) names that
 * file, not a typed field the request never sent.
 */
export function inRequestTerms(error: unknown, composed: Composed): unknown {
  if (!(error instanceof HangarError) || error.code !== 'validation_failed' || !error.issues) return error;
  let moved = false;
  const issues = error.issues.map((issue) => {
    const [root, field, ...rest] = issue.loc;
    if (root !== 'body') return issue;
    let file: string | undefined;
    let inner = rest;
    if (field === 'runtime' || field === 'backend' || field === 'name') {
      file = 'agent.json';
      inner = [field, ...rest];
    } else if (field === 'tools') file = 'tools.json';
    else if (field === 'subagents' && typeof rest[0] === 'number') {
      const name = composed.definition.subagents[rest[0]]?.name;
      const part = rest[1];
      const dir = `subagents/${name}`;
      file = part === 'tools' ? `${dir}/tools.json` : composed.rawPaths.has(`${dir}/agent.json`) ? `${dir}/agent.json` : `${dir}/AGENTS.md`;
      inner = rest.slice(part === 'tools' ? 2 : 1);
    }
    if (file === undefined || !composed.rawPaths.has(file)) return issue;
    moved = true;
    return { ...issue, loc: ['body', 'files', file], msg: `${file}: ${inner.length > 0 ? `${inner.join('.')}: ` : ''}${issue.msg}` };
  });
  return moved ? invalid(issues) : error;
}

/** The agent fields (wire names, in FIELD_SECTION order) whose values differ between two definitions. */
function changedFields(before: AgentDefinition, after: AgentDefinition): string[] {
  return Object.keys(FIELD_SECTION).filter((f) => stable(before[f as keyof AgentDefinition]) !== stable(after[f as keyof AgentDefinition]));
}

/** JSON with object keys sorted, so equal values compare equal whatever order their keys came in. */
function stable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  ) ?? 'undefined';
}

function emptyDefinition(): AgentDefinition {
  return {
    name: '',
    description: '',
    runtime: { model: { model_id: '' } },
    instructions: '',
    tools: { tools: [], interrupt_config: {} },
    skills: [],
    subagents: [],
    extras: {},
  };
}

function mergeTyped(base: AgentDefinition, input: AgentInput): AgentDefinition {
  const def: AgentDefinition = { ...base };
  if (input.name !== undefined) def.name = input.name;
  if (input.description !== undefined) def.description = input.description;
  if (input.runtime !== undefined) def.runtime = runtimeOf(input.runtime);
  if (input.extras !== undefined) def.extras = input.extras;
  if (input.backend !== undefined) def.backend = input.backend;
  if (input.instructions !== undefined) def.instructions = input.instructions;
  if (input.tools !== undefined) def.tools = fullTools(input.tools);
  if (input.skills !== undefined) {
    def.skills = input.skills.map((s) => ({
      name: s.name,
      description: s.description ?? '',
      instructions: s.instructions ?? '',
      files: s.files ?? {},
    }));
  }
  if (input.subagents !== undefined) {
    def.subagents = input.subagents.map((s) => ({
      name: s.name,
      description: s.description ?? '',
      instructions: s.instructions ?? '',
      ...(s.model_id ? { model_id: s.model_id } : {}),
      ...(s.tools ? { tools: fullTools(s.tools) } : {}),
    }));
  }
  return def;
}

function fullTools(t: ToolsInput): ToolsConfig {
  return { tools: t.tools ?? [], interrupt_config: t.interrupt_config ?? {} };
}

/** Read a tree, reporting a malformed file as a 422 on `files.<path>`. */
function readTree(files: Record<string, string>): AgentDefinition {
  try {
    return filesToDefinition(files);
  } catch (error) {
    if (error instanceof TreeFormatError) throw invalidField(['files', error.path], error.message);
    throw error;
  }
}

function checkTypedInput(input: AgentInput): void {
  if (input.name !== undefined && input.name.trim() === '') throw invalidField(['name'], 'must not be blank');
  checkNames('skills', input.skills ?? [], 'skill');
  checkNames('subagents', input.subagents ?? [], 'subagent');
  (input.skills ?? []).forEach((skill, i) => {
    for (const rel of Object.keys(skill.files ?? {})) {
      const problem = pathProblem(rel);
      if (problem) throw invalidField(['skills', i, 'files', rel], `the path ${problem}`);
      if (rel === 'SKILL.md') throw invalidField(['skills', i, 'files', rel], 'SKILL.md is written from the skill’s description and instructions');
    }
  });
}

function checkNames(field: string, items: { name: string }[], what: string): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (!SLUG.test(item.name)) {
      throw invalidField([field, i, 'name'], `"${item.name}" is not a valid ${what} name: use letters, digits, spaces, _ and -`);
    }
    if (seen.has(item.name)) throw invalidField([field, i, 'name'], `${what} name "${item.name}" is used twice`);
    seen.add(item.name);
  });
}

function checkRawFiles(
  files: Record<string, { content?: string | null | undefined }>,
  typedSections: Set<TreeSection>,
  given: string[],
): Set<string> {
  for (const path of Object.keys(files)) {
    const problem = pathProblem(path);
    if (problem) throw invalidField(['files', path], `the path ${problem}`);
    const section = sectionOf(path);
    if (section && typedSections.has(section)) {
      const field = given.find((f) => FIELD_SECTION[f] === section)!;
      throw invalidField(
        ['files', path],
        `"${field}" and the file ${path} both set ${SECTION_FILE[section]}: send one or the other`,
        'conflict',
      );
    }
  }
  return new Set(Object.keys(files));
}

/**
 * Refuse two paths that name the same file or folder on a case-insensitive or normalising file
 * system (macOS, Windows): `AGENTS.md` and `agents.md`, `Skills/` and `skills/`, `café` composed
 * and decomposed. A clone or `agents pull` there would keep one and silently drop the other (and a
 * push from that folder would then change the agent), so the listing would not be what runs. Pairs
 * an agent already held are left alone, so that its updates still go through; the update that
 * adds a path decides.
 */
function checkCollisions(current: Record<string, string>, next: Record<string, string>): void {
  const seen = new Map<string, { prefix: string; path: string }>();
  const old = new Set<string>();
  for (const path of Object.keys(current)) {
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) old.add(segments.slice(0, i).join('/'));
  }
  for (const path of Object.keys(next).sort()) {
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const key = prefix.normalize('NFC').toLowerCase();
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, { prefix, path });
        continue;
      }
      const other = first.prefix;
      if (other !== prefix && !(old.has(other) && old.has(prefix))) {
        throw invalidField(
          ['files', old.has(prefix) ? first.path : path],
          `the path ${prefix} and the path ${other} differ only in letter case or Unicode normalisation: on macOS and Windows they name the same ${i === segments.length ? 'file' : 'folder'}, so a clone or pull there would lose one; rename one`,
        );
      }
    }
  }
}

function checkSizes(files: Record<string, string>): void {
  const paths = Object.keys(files);
  if (paths.length > MAX_AGENT_FILES) {
    throw new HangarError('agent_too_large', `the agent would have ${paths.length} files; the limit is ${MAX_AGENT_FILES}`);
  }
  let total = 0;
  for (const path of paths) {
    const size = Buffer.byteLength(files[path]!, 'utf8');
    if (size > MAX_FILE_BYTES) {
      throw new HangarError('agent_file_too_large', `the file ${path} is ${size} bytes; the per-file limit is ${MAX_FILE_BYTES} bytes`);
    }
    total += size;
  }
  if (total > MAX_AGENT_BYTES) {
    throw new HangarError('agent_too_large', `the agent's files would total ${total} bytes; the per-agent limit is ${MAX_AGENT_BYTES} bytes`);
  }
}
