// Wire shapes of code-host integrations and their repositories (SPEC "Code-host repository").
import { z } from '@hono/zod-openapi';
import type { Integration } from '../../core/integrations/types.js';

const name = z.string().trim().min(1, 'must not be blank').max(200).optional().openapi({ description: 'Display name; also the `owner` of top-level repositories of a `git` integration.' });

const GithubCreate = z
  .object({
    kind: z.literal('github'),
    name,
    base_url: z.string().min(1).max(2000).optional().openapi({
      description: 'REST API base: `https://api.github.com` (the default) or `https://<host>/api/v3` for GitHub Enterprise Server.',
    }),
    token: z.string().min(1, 'must not be empty').max(4000).optional().openapi({ description: 'A personal access or OAuth token. Stored encrypted; never returned.' }),
    app: z
      .object({
        app_id: z.union([z.string().min(1), z.number().int().positive()]),
        installation_id: z.union([z.string().min(1), z.number().int().positive()]),
        private_key: z.string().min(1).max(20_000).openapi({ description: 'The app’s private key (PEM). Stored encrypted; never returned.' }),
      })
      .optional()
      .openapi({ description: 'GitHub App installation credentials, instead of `token`.' }),
  })
  .openapi('CreateGithubIntegration');

const GitCreate = z
  .object({
    kind: z.literal('git'),
    name,
    base_url: z.string().min(1).max(4000).openapi({
      description: 'Absolute path (or `file://` URL) of a directory on the server holding bare repositories as `<name>.git` or `<owner>/<name>.git`.',
      example: '/srv/git',
    }),
  })
  .openapi('CreateGitIntegration');

export const CreateIntegrationRequest = z.discriminatedUnion('kind', [GithubCreate, GitCreate]).openapi('CreateVcshostIntegrationRequest');

export const IntegrationSchema = z
  .object({
    id: z.uuid().openapi({ description: 'Use as `integration_id` in a deployment’s `source_config`.' }),
    tenant_id: z.uuid(),
    kind: z.enum(['github', 'git']),
    name: z.string(),
    base_url: z.string(),
    auth_type: z.enum(['token', 'app']).nullable().openapi({ description: 'How a `github` integration authenticates; null for `git`.' }),
    app_id: z.string().nullable(),
    installation_id: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('VcshostIntegration');

export const IntegrationPage = z.object({ resources: z.array(IntegrationSchema), offset: z.number().int() }).openapi('VcshostIntegrationPage');

export const RepositorySchema = z
  .object({
    host_integration_id: z.uuid(),
    id: z.number().int().openapi({ description: 'The code host’s repository id (for `git` integrations, a stable number derived from the path).' }),
    name: z.string(),
    owner: z.string(),
    url: z.string().openapi({ description: 'Use as `source_config.repo_url` of a deployment.' }),
    default_branch: z.string().openapi({ description: 'Use as `source_revision_config.repo_ref` of a deployment.' }),
  })
  .openapi('VcshostRepository');

/** The wire form of an integration: never its credentials. */
export function presentIntegration(i: Integration): z.infer<typeof IntegrationSchema> {
  return {
    id: i.id,
    tenant_id: i.workspaceId,
    kind: i.kind,
    name: i.name,
    base_url: i.baseUrl,
    auth_type: i.authType,
    app_id: i.appId,
    installation_id: i.installationId,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}
