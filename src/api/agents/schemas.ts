// Wire shapes of agents (SPEC "Agent (managed)"; fields beyond it follow the hosted API reference).
import { z } from '@hono/zod-openapi';
import type { Agent, AgentSummary } from '../../core/agents/service.js';
import { MAX_NAME_LENGTH } from '../../core/agents/compose.js';
import { MAX_RUN_TIMEOUT_SECONDS } from '../../core/agents/tree.js';
import { KNOWN_PROVIDERS } from '../../core/model-configs/providers.js';
import { isTimeZone } from '../../runtime/agent/clock.js';

const MODEL_ID_FORMS = `\`<provider>:<model_id>\` with a provider this server can run (${KNOWN_PROVIDERS.join(', ')}; any other is a 422), or (no colon) the name of a saved model configuration of the workspace.`;

const ToolSpec = z
  .object({
    name: z.string().min(1).openapi({ description: 'Tool name on the tool server.' }),
    mcp_server_url: z.string().min(1).openapi({ description: 'Must equal (trailing slashes stripped) the URL of a tool server registered in the workspace. Read back as given by admin and member keys; a viewer key reads its credentials (`?api_key=`) as `[redacted]`, here and in every other field and file of the agent.' }),
    mcp_server_name: z.string().optional().openapi({ description: 'Server display name.' }),
    display_name: z.string().optional().openapi({ description: 'Tool display name.' }),
  })
  .openapi('ToolSpec');

const interruptConfig = z.record(z.string(), z.boolean()).openapi({
  description:
    'Keys `{mcp_server_url}::{tool_name}` (extra `::` parts ignored when matching; trailing URL slashes stripped) or a bare tool name: one of the agent’s MCP tools or a built-in tool (`ls`, `read_file`, `write_file`, `edit_file`, `delete`, `glob`, `grep`, `execute`, `write_todos`, `task`). `true`: a person approves each call first. A key that matches no tool of the agent (or of its subagents) is a 422.',
});

/** The tool set as stored and returned. */
export const ToolsConfig = z
  .object({
    tools: z.array(ToolSpec).openapi({ description: 'MCP tools of the agent; stored as `tools.json`.' }),
    interrupt_config: interruptConfig,
  })
  .openapi('ToolsConfig');

/** The tool set as sent: a missing part is empty (the whole set is replaced). */
const ToolsConfigInput = z
  .object({
    tools: z.array(ToolSpec).optional().openapi({ description: 'MCP tools of the agent; stored as `tools.json`. Default `[]`.' }),
    interrupt_config: interruptConfig.optional().openapi({ description: 'Default `{}`.' }),
  })
  .openapi('ToolsConfigInput');

const Runtime = z
  .object({
    model: z.object({
      model_id: z.string().openapi({
        description: MODEL_ID_FORMS,
        example: 'anthropic:claude-sonnet-4-6',
      }),
    }),
    run_timeout_seconds: z
      .number()
      .int()
      .positive()
      .max(MAX_RUN_TIMEOUT_SECONDS)
      .optional()
      .openapi({
        description:
          'Hangar extension: the longest a run of this agent may take, in seconds (at most 86400). A run over it is stopped with status `timeout` and error code `run_timeout`. Default: the server setting `HANGAR_RUN_TIMEOUT_MS`.',
      }),
    user_timezone: z
      .string()
      .refine(isTimeZone, 'must be an IANA time zone name (e.g. Europe/Paris)')
      .optional()
      .openapi({
        description:
          'The IANA zone of the agent’s user, as the `X-User-Timezone` header of a create or update stamps it: the agent’s system prompt gets the current date and time there for runs that send no `user_timezone` of their own. UTC when absent.',
        example: 'America/Los_Angeles',
      }),
  })
  .openapi('AgentRuntime');

const SkillSpec = z
  .object({
    type: z.literal('inline').optional().openapi({ description: 'Only `inline` exists.' }),
    name: z.string().openapi({ description: 'Letters, digits, spaces, `_`, `-`; unique within the agent. Folder `skills/<name>/`.' }),
    description: z.string().optional(),
    instructions: z.string().optional().openapi({ description: 'Body of `skills/<name>/SKILL.md` after its front matter.' }),
    files: z.record(z.string(), z.string()).optional().openapi({ description: 'Other files of the skill, by path relative to its folder.' }),
  })
  .openapi('SkillSpec');

const SubagentSpec = z
  .object({
    name: z.string().openapi({ description: 'Letters, digits, spaces, `_`, `-`; unique within the agent. Folder `subagents/<name>/`.' }),
    description: z.string().optional(),
    model_id: z.string().optional().openapi({ description: `${MODEL_ID_FORMS} Inherits the agent’s model when absent.` }),
    instructions: z.string().optional().openapi({ description: 'Body of `subagents/<name>/AGENTS.md` after its front matter.' }),
    tools: ToolsConfigInput.optional().openapi({ description: 'Written to `subagents/<name>/tools.json` when given.' }),
  })
  .openapi('SubagentSpec');

const FileEntry = z
  .object({ content: z.string().nullable().optional().openapi({ description: 'UTF-8 content. On update, `null` deletes the file (Hangar addition).' }) })
  .openapi('FileEntry');

const FileMap = z
  .record(z.string(), FileEntry)
  .openapi('FileMap', {
    description:
      'Raw files by relative path (no leading `/`, no `.` or `..` segments, no NUL). Setting a typed field and a file it owns (`AGENTS.md`, `tools.json`, `agent.json`, `skills/…`, `subagents/…`) in one request is a 422. Limits: 1 MiB per file (413 `agent_file_too_large`), 16 MiB and 5,000 files per agent (413 `agent_too_large`).',
  });

const SharedUsers = z
  .object({
    read: z.array(z.string()).optional().openapi({ description: 'Users who may read the agent.' }),
    run: z.array(z.string()).optional().openapi({ description: 'Users who may run the agent.' }),
    update: z.array(z.string()).optional().openapi({ description: 'Users who may change the agent.' }),
  })
  .passthrough()
  .openapi('SharedUsers', { description: 'Stored and returned as sent, like the rest of `permissions`.' });

const Permissions = z
  .object({
    identity: z.enum(['personal', 'shared']).optional(),
    visibility: z.enum(['tenant', 'user']).optional(),
    tenant_access_level: z.enum(['read', 'run', 'write']).optional(),
    shared_users: SharedUsers.optional(),
  })
  .passthrough()
  .openapi('AgentPermissions', {
    description:
      'Stored and returned; Hangar enforces access by API-key role, not by these fields. Also set by `permissions` in a raw `files["agent.json"]` (the hosted CLI’s layout), checked the same way; both in one request must agree.',
  });

const SandboxConfig = z
  .object({
    scope: z.string().optional().openapi({ enum: ['thread', 'agent'], description: '`thread` (default): one sandbox per thread; `agent`: one sandbox shared by all the agent’s threads.' }),
    idle_ttl_seconds: z.number().int().optional().openapi({ description: 'A sandbox unused this long is stopped (its files are kept). Default 1800.' }),
    delete_after_stop_seconds: z.number().int().optional().openapi({ description: 'A stopped sandbox is removed (with its files) this long after it stopped. Default 604800 (7 days).' }),
    policy_ids: z.array(z.string()).optional().openapi({ description: 'Accepted and stored. Hangar has no sandbox policies yet: a sandbox never has network access.' }),
  })
  .passthrough()
  .openapi('SandboxBackendConfig');

const Backend = z
  .object({
    type: z.string().optional().openapi({
      enum: ['state', 'sandbox', 'thread_scoped_sandbox', 'default', 'agent_scoped_sandbox'],
      description:
        '`state` (default): files live in the thread’s state, no command execution. `sandbox`: file tools and an `execute` tool work in an isolated sandbox (see docs/sandboxes.md). `thread_scoped_sandbox` (older clients) = `sandbox` with scope `thread`; `agent_scoped_sandbox` = scope `agent`; `default` = `state`. Anything else is a 422.',
    }),
    sandbox_config: SandboxConfig.optional(),
    sandbox: SandboxConfig.optional().openapi({ description: 'The reference OpenAPI’s name for `sandbox_config`; accepted as the same. Both, with different settings, is a 422.' }),
  })
  .passthrough()
  .openapi('AgentBackend', { description: 'Stored in `agent.json` and returned as sent. Checked: an unknown type or field is a 422 naming it.' });

const Extras = z.record(z.string(), z.unknown()).openapi({ description: 'Caller-defined metadata, stored in `agent.json`.' });

const agentFields = {
  description: z.string().optional(),
  permissions: Permissions.optional(),
  runtime: Runtime.optional(),
  backend: Backend.optional(),
  instructions: z.string().optional().openapi({ description: 'The agent’s instructions; `AGENTS.md`.' }),
  tools: ToolsConfigInput.optional().openapi({ description: 'Replaces the whole tool set (`tools.json`) when given.' }),
  subagents: z.array(SubagentSpec).optional().openapi({ description: 'Replaces every subagent when given.' }),
  skills: z.array(SkillSpec).optional().openapi({ description: 'Replaces every skill when given.' }),
  extras: Extras.optional(),
  files: FileMap.optional(),
};

/** The longest revision message an update may give. */
const MAX_REVISION_MESSAGE_LENGTH = 200;

export const CreateAgentRequest = z
  .object({ name: z.string().trim().min(1, 'must not be blank').max(MAX_NAME_LENGTH), ...agentFields })
  .openapi('CreateAgentRequest', { description: '`runtime.model.model_id` is required too (Hangar choice: an agent without a model cannot run).' });

export const UpdateAgentRequest = z
  .object({
    name: z.string().trim().min(1, 'must not be blank').max(MAX_NAME_LENGTH).optional(),
    ...agentFields,
    message: z
      .string()
      .trim()
      .min(1, 'must not be blank')
      .max(MAX_REVISION_MESSAGE_LENGTH)
      .refine((m) => !/\p{Cc}/u.test(m), 'must be one line, without control characters')
      .optional()
      .openapi({ description: 'The new revision’s message (one line, at most 200 characters), e.g. `Restore revision #3`. Default: `Update` and the fields that changed.' }),
  })
  .openapi('UpdateAgentRequest', { description: 'Omitted fields keep their values; every update makes a new commit, even one that changes nothing.' });

export const AgentSummarySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    owner_id: z.uuid().openapi({ description: 'Id of the API key that created the agent.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    permissions: Permissions,
    runtime: Runtime,
    backend: Backend.optional(),
    extras: Extras,
    revision: z.string().openapi({ description: 'Id (40 hex digits) of the head commit.' }),
  })
  .openapi('AgentSummary');

/** The files of an answer: always with their content (the request's FileMap takes `null` to delete one). */
const AgentFiles = z
  .record(z.string(), z.object({ content: z.string().openapi({ description: 'UTF-8 content.' }) }))
  .openapi('AgentFiles', { description: 'Every file of the agent at this revision, by relative path.' });

export const AgentSchema = AgentSummarySchema.extend({
  instructions: z.string(),
  tools: ToolsConfig,
  subagents: z.array(SubagentSpec),
  skills: z.array(SkillSpec),
  files: AgentFiles.optional().openapi({ description: 'Every file of the tree; only with `include_files=true`.' }),
}).openapi('Agent');

export const ListAgentsResponse = z
  .object({
    items: z.array(AgentSummarySchema),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for the next page; `null` on the last page.' }),
  })
  .openapi('ListAgentsResponse');

export const ListAgentsQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: '1 to 100.' }),
  cursor: z.string().optional().openapi({ description: '`next_cursor` of the previous page, sent with the same `sort_by` and `sort_order`: a cursor of another sort, or one not returned by this endpoint, is a 422 naming `cursor`.' }),
  name: z.string().optional().openapi({ description: 'Case-insensitive substring of the name.' }),
  sort_by: z.enum(['created_at', 'updated_at', 'name']).default('updated_at'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
});

export const IncludeFilesQuery = z.object({
  include_files: z.enum(['true', 'false', '1', '0']).optional().openapi({ description: '`true` (or `1`, as the hosted contract allows) adds `files`, the raw file map.' }),
});

/** Whether an `include_files` query asks for the files. */
export function includesFiles(query: z.infer<typeof IncludeFilesQuery>): boolean {
  return query.include_files === 'true' || query.include_files === '1';
}

const DEFAULT_PERMISSIONS = { identity: 'personal', visibility: 'tenant', tenant_access_level: 'read' } as const;

/** The wire form of an agent summary. */
export function presentSummary(a: AgentSummary): z.infer<typeof AgentSummarySchema> {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    owner_id: a.ownerId,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
    permissions: { ...DEFAULT_PERMISSIONS, ...(a.permissions ?? {}) },
    runtime: a.runtime,
    ...(a.backend ? { backend: a.backend } : {}),
    extras: a.extras,
    revision: a.revision,
  };
}

/** The wire form of an agent; `files` only when asked for. */
export function presentAgent(a: Agent, includeFiles: boolean): z.infer<typeof AgentSchema> {
  const d = a.definition;
  // Name, description, runtime, extras and backend come from the tree, so an old revision shows its own.
  const summary = presentSummary({ ...a, name: d.name, description: d.description, runtime: d.runtime, extras: d.extras, backend: d.backend ?? null });
  return {
    ...summary,
    instructions: d.instructions,
    tools: d.tools,
    subagents: d.subagents.map((s) => ({
      name: s.name,
      description: s.description,
      ...(s.model_id ? { model_id: s.model_id } : {}),
      instructions: s.instructions,
      ...(s.tools ? { tools: s.tools } : {}),
    })),
    skills: d.skills.map((s) => ({ type: 'inline' as const, name: s.name, description: s.description, instructions: s.instructions, files: s.files })),
    ...(includeFiles ? { files: Object.fromEntries(Object.entries(a.files).map(([p, content]) => [p, { content }])) } : {}),
  };
}
