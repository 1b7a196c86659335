// Saved model configurations: a workspace names a model id with its parameters (and optionally a
// provider API key, sealed at rest). An agent whose model_id has no colon refers to one by name.
import { providerModelIdProblem } from './providers.js';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { ModelConfigsTable } from '../../db/tables/agents.js';
import { type Caller, requireWrite } from '../caller.js';
import type { EgressGuard } from '../../net/egress.js';
import { checkOutboundUrl, laptopEgress } from '../egress.js';
import { HangarError, invalidField } from '../errors.js';
import type { Cipher } from '../secrets/cipher.js';

/** Model parameters passed to the chat model. All optional. */
export interface ModelParameters {
  temperature?: number | undefined;
  max_tokens?: number | undefined;
  /** Base URL of an OpenAI-compatible server. */
  base_url?: string | undefined;
  /** Delay between streamed chunks, for the offline `scripted` provider only. */
  delay_ms?: number | undefined;
}

/** A saved model configuration, without its API key. */
export interface ModelConfig {
  id: string;
  workspaceId: string;
  name: string;
  modelId: string;
  parameters: ModelParameters;
  hasApiKey: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What the runtime needs to build a chat model from a configuration name. */
export interface ResolvedModelConfig {
  name: string;
  /** Always `<provider>:<model_id>`. */
  modelId: string;
  parameters: ModelParameters;
  /** The provider API key in clear text, when one is stored. Never log it. */
  apiKey?: string;
}

export interface CreateModelConfigInput {
  name: string;
  model_id: string;
  parameters?: ModelParameters | undefined;
  api_key?: string | undefined;
}

export interface UpdateModelConfigInput {
  name?: string | undefined;
  model_id?: string | undefined;
  /** Replaces the stored parameters wholesale. */
  parameters?: ModelParameters | undefined;
  /** A string replaces the key; `null` removes it. */
  api_key?: string | null | undefined;
}

/** CRUD of model configurations, and name → configuration resolution for the runtime. */
export class ModelConfigService {
  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly egress: EgressGuard = laptopEgress(),
  ) {}

  async create(caller: Caller, input: CreateModelConfigInput): Promise<ModelConfig> {
    requireWrite(caller);
    checkName(input.name);
    checkModelId(input.model_id);
    this.checkBaseUrl(input.parameters);
    const row = await this.db
      .insertInto('model_configs')
      .values({
        workspace_id: caller.workspaceId,
        name: input.name,
        model_id: input.model_id,
        parameters: JSON.stringify(input.parameters ?? {}),
        api_key_encrypted: input.api_key ? this.cipher.encrypt(input.api_key) : null,
      })
      .onConflict((oc) => oc.columns(['workspace_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw nameTaken(input.name);
    return toDomain(row);
  }

  /** A base URL is where the runtime sends prompts and the provider key: the outbound policy applies. */
  private checkBaseUrl(parameters: { base_url?: string | undefined } | undefined): void {
    if (parameters?.base_url !== undefined) checkOutboundUrl(this.egress, ['parameters', 'base_url'], parameters.base_url);
  }

  async list(caller: Caller): Promise<ModelConfig[]> {
    const rows = await this.db.selectFrom('model_configs').selectAll().where('workspace_id', '=', caller.workspaceId).orderBy('name').execute();
    return rows.map(toDomain);
  }

  async get(caller: Caller, id: string): Promise<ModelConfig> {
    const row = await this.db
      .selectFrom('model_configs')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(id);
    return toDomain(row);
  }

  async update(caller: Caller, id: string, input: UpdateModelConfigInput): Promise<ModelConfig> {
    requireWrite(caller);
    if (input.name !== undefined) checkName(input.name);
    if (input.model_id !== undefined) checkModelId(input.model_id);
    this.checkBaseUrl(input.parameters);
    try {
      const row = await this.db
        .updateTable('model_configs')
        .set({
          updated_at: new Date(),
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.model_id !== undefined ? { model_id: input.model_id } : {}),
          ...(input.parameters !== undefined ? { parameters: JSON.stringify(input.parameters) } : {}),
          ...(input.api_key !== undefined ? { api_key_encrypted: input.api_key === null ? null : this.cipher.encrypt(input.api_key) } : {}),
        })
        .where('workspace_id', '=', caller.workspaceId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw notFound(id);
      return toDomain(row);
    } catch (error) {
      if (isUniqueViolation(error) && input.name !== undefined) throw nameTaken(input.name);
      throw error;
    }
  }

  /** Delete; idempotent. Agents naming the configuration fail at run time until it exists again. */
  async delete(caller: Caller, id: string): Promise<void> {
    requireWrite(caller);
    await this.db.deleteFrom('model_configs').where('workspace_id', '=', caller.workspaceId).where('id', '=', id).execute();
  }

  /** The configuration called `name` in the workspace, if any (no secrets). */
  async findByName(workspaceId: string, name: string): Promise<ModelConfig | undefined> {
    const row = await this.db
      .selectFrom('model_configs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
    return row ? toDomain(row) : undefined;
  }

  /**
   * For the runtime: the configuration called `name` with its API key decrypted, or `undefined`.
   * The runtime calls this when an agent's model_id has no colon, then builds the model from
   * `modelId` and `parameters` (temperature, max_tokens, base_url, delay_ms) and `apiKey`.
   */
  async resolve(workspaceId: string, name: string): Promise<ResolvedModelConfig | undefined> {
    const row = await this.db
      .selectFrom('model_configs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      name: row.name,
      modelId: row.model_id,
      parameters: row.parameters as ModelParameters,
      ...(row.api_key_encrypted ? { apiKey: this.cipher.decrypt(row.api_key_encrypted) } : {}),
    };
  }
}

function toDomain(row: Selectable<ModelConfigsTable>): ModelConfig {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    modelId: row.model_id,
    parameters: row.parameters as ModelParameters,
    hasApiKey: row.api_key_encrypted !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function checkName(name: string): void {
  // A name with a colon could never be referenced: agents read a colon as <provider>:<model_id>.
  if (name.includes(':')) throw invalidField(['name'], 'must not contain ":" (agents read a colon as <provider>:<model_id>)');
  if (name.trim() === '') throw invalidField(['name'], 'must not be blank');
}

function checkModelId(modelId: string): void {
  const problem = providerModelIdProblem(modelId);
  if (problem) throw invalidField(['model_id'], problem);
}

function notFound(id: string): HangarError {
  return new HangarError('model_config_not_found', `no model configuration with id ${id} in this workspace`);
}

function nameTaken(name: string): HangarError {
  return new HangarError('model_config_name_taken', `a model configuration named "${name}" already exists in this workspace`);
}
