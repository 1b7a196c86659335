// Checks of an agent definition against its workspace: model ids resolve, tool server URLs are
// registered, interrupt keys are well formed. Run before anything is written.
import { invalidField } from '../errors.js';
import { isHttpUrl, normalizeServerUrl, redactServerUrl } from '../mcp-servers/url.js';
import { providerModelIdProblem } from '../model-configs/providers.js';
import { checkBackend } from './backend.js';
import type { AgentDefinition, ToolsConfig } from './tree.js';

/**
 * The tools every deep agent has besides its MCP tools (deepagents' file tools, `execute` on a
 * sandbox backend, the to-do list and the subagent tool): a bare `interrupt_config` key may name them.
 */
export const BUILT_IN_TOOLS = ['ls', 'read_file', 'write_file', 'edit_file', 'delete', 'glob', 'grep', 'execute', 'write_todos', 'task'] as const;

/** What validation needs to know about the workspace. */
export interface WorkspaceLookups {
  /** Whether a tool server is registered at this (normalised) URL. */
  hasToolServer(url: string): Promise<boolean>;
  /** Whether a saved model configuration has this name. */
  hasModelConfig(name: string): Promise<boolean>;
}

/**
 * Throw a 422 naming the first problem of `def` in its workspace. `previous` (an update) is the
 * agent as stored: a tool server URL it already names is not checked again, so an agent whose tool
 * server was deleted since can still be updated (its runs report the missing server to the model).
 */
export async function validateDefinition(def: AgentDefinition, lookups: WorkspaceLookups, previous?: AgentDefinition): Promise<void> {
  if (def.backend !== undefined) checkBackend(def.backend);
  await checkModel(['runtime', 'model', 'model_id'], def.runtime.model.model_id, lookups);
  const all = [...def.tools.tools, ...def.subagents.flatMap((s) => s.tools?.tools ?? [])];
  const known = new Set(previous ? [...previous.tools.tools, ...previous.subagents.flatMap((s) => s.tools?.tools ?? [])].map((t) => normalizeServerUrl(t.mcp_server_url)) : []);
  await checkTools(['tools'], def.tools, lookups, all, known);
  for (const [i, sub] of def.subagents.entries()) {
    if (sub.model_id) await checkModel(['subagents', i, 'model_id'], sub.model_id, lookups);
    if (sub.tools) await checkTools(['subagents', i, 'tools'], sub.tools, lookups, all, known);
  }
}

async function checkModel(loc: (string | number)[], modelId: string, lookups: WorkspaceLookups): Promise<void> {
  if (modelId.includes(':')) {
    // The same check as a saved model configuration's: the form, then a provider this server can run.
    const problem = providerModelIdProblem(modelId);
    if (problem) throw invalidField(loc, problem);
    return;
  }
  if (modelId.trim() === '') throw invalidField(loc, 'must not be blank: use <provider>:<model_id> or a saved model configuration name');
  if (!(await lookups.hasModelConfig(modelId))) {
    throw invalidField(
      loc,
      `"${modelId}" has no colon, so it names a saved model configuration, and this workspace has none of that name; use <provider>:<model_id> or create it under /v1/deepagents/model-configs`,
    );
  }
}

async function checkTools(loc: (string | number)[], tools: ToolsConfig, lookups: WorkspaceLookups, all: ToolsConfig['tools'], known: Set<string>): Promise<void> {
  for (const [i, tool] of tools.tools.entries()) {
    const url = tool.mcp_server_url;
    if (!isHttpUrl(url)) throw invalidField([...loc, 'tools', i, 'mcp_server_url'], `"${url}" is not an absolute http(s) URL`);
    if (!known.has(normalizeServerUrl(url)) && !(await lookups.hasToolServer(normalizeServerUrl(url)))) {
      throw invalidField(
        [...loc, 'tools', i, 'mcp_server_url'],
        `no tool server is registered at ${redactServerUrl(url)} in this workspace; register it under /v1/deepagents/mcp-servers first`,
      );
    }
  }
  for (const key of Object.keys(tools.interrupt_config)) {
    const problem = interruptKeyProblem(key) ?? unmatchedKeyProblem(key, all);
    if (problem) throw invalidField([...loc, 'interrupt_config', key], problem);
  }
}

/**
 * Why a well-formed interrupt key names no tool of the agent (its own or its subagents'), or `null`:
 * a bare name must be a built-in tool or the name of one of its MCP tools, `{url}::{tool}` one of
 * its MCP tools. A key that matches nothing would silently never ask for approval.
 */
function unmatchedKeyProblem(key: string, all: ToolsConfig['tools']): string | null {
  if (!key.includes('::')) {
    if ((BUILT_IN_TOOLS as readonly string[]).includes(key) || all.some((t) => t.name === key)) return null;
    return `"${key}" matches no tool of this agent: use a built-in tool (${BUILT_IN_TOOLS.join(', ')}) or the name of one of its MCP tools`;
  }
  const [url, tool] = key.split('::');
  if (all.some((t) => t.name === tool && normalizeServerUrl(t.mcp_server_url) === normalizeServerUrl(url!))) return null;
  return `"${key}" matches no tool of this agent: no tool ${tool} of ${redactServerUrl(url!)} is in its tools (or its subagents')`;
}

/** Why an interrupt_config key is malformed, or `null`: `{url}::{tool}[::…]` or a bare tool name. */
export function interruptKeyProblem(key: string): string | null {
  if (key.trim() === '') return 'an interrupt key must not be blank';
  if (!key.includes('::')) {
    if (/\s/.test(key) || key.includes(':')) return `"${key}" is neither {mcp_server_url}::{tool_name} nor a bare tool name`;
    return null;
  }
  const [url, tool] = key.split('::');
  if (!url || !isHttpUrl(url)) return `"${key}": the part before "::" must be the tool server's http(s) URL`;
  if (!tool || tool.trim() === '') return `"${key}": a tool name must follow "${url}::"`;
  return null;
}
