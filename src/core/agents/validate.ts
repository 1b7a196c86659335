// Checks of an agent definition against its workspace: model ids resolve, tool server URLs are
// registered, interrupt keys are well formed. Run before anything is written.
import { invalidField } from '../errors.js';
import { isHttpUrl, normalizeServerUrl } from '../mcp-servers/url.js';
import type { AgentDefinition, ToolsConfig } from './tree.js';

/** What validation needs to know about the workspace. */
export interface WorkspaceLookups {
  /** Whether a tool server is registered at this (normalised) URL. */
  hasToolServer(url: string): Promise<boolean>;
  /** Whether a saved model configuration has this name. */
  hasModelConfig(name: string): Promise<boolean>;
}

/** `<provider>:<model_id>`: a provider of lower-case letters, digits, `_`, `-` or `.`, then a non-empty id. */
const MODEL_ID = /^[a-z0-9][a-z0-9_.-]*:\S.*$/;

/** Throw a 422 naming the first problem of `def` in its workspace. */
export async function validateDefinition(def: AgentDefinition, lookups: WorkspaceLookups): Promise<void> {
  await checkModel(['runtime', 'model', 'model_id'], def.runtime.model.model_id, lookups);
  await checkTools(['tools'], def.tools, lookups);
  for (const [i, sub] of def.subagents.entries()) {
    if (sub.model_id) await checkModel(['subagents', i, 'model_id'], sub.model_id, lookups);
    if (sub.tools) await checkTools(['subagents', i, 'tools'], sub.tools, lookups);
  }
}

async function checkModel(loc: (string | number)[], modelId: string, lookups: WorkspaceLookups): Promise<void> {
  if (modelId.includes(':')) {
    if (!MODEL_ID.test(modelId)) {
      throw invalidField(loc, `"${modelId}" is not of the form <provider>:<model_id> (for example "anthropic:claude-sonnet-4-6")`);
    }
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

async function checkTools(loc: (string | number)[], tools: ToolsConfig, lookups: WorkspaceLookups): Promise<void> {
  for (const [i, tool] of tools.tools.entries()) {
    const url = tool.mcp_server_url;
    if (!isHttpUrl(url)) throw invalidField([...loc, 'tools', i, 'mcp_server_url'], `"${url}" is not an absolute http(s) URL`);
    if (!(await lookups.hasToolServer(normalizeServerUrl(url)))) {
      throw invalidField(
        [...loc, 'tools', i, 'mcp_server_url'],
        `no tool server is registered at ${normalizeServerUrl(url)} in this workspace; register it under /v1/deepagents/mcp-servers first`,
      );
    }
  }
  for (const key of Object.keys(tools.interrupt_config)) {
    const problem = interruptKeyProblem(key);
    if (problem) throw invalidField([...loc, 'interrupt_config', key], problem);
  }
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
