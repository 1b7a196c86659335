// CodeHosts over the code-host integrations (issue 7): `git` integrations clone from their directory
// of bare repositories; `github` ones with an access token sent as an HTTP header through git's
// environment, so it never appears in a URL, a command line or a log.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HangarError } from '../errors.js';
import type { IntegrationService } from '../integrations/service.js';
import type { CodeHosts } from './ports.js';

/** The CodeHosts port served by the integration service. */
export function integrationCodeHosts(integrations: IntegrationService): CodeHosts {
  return {
    async resolve({ workspaceId, integrationId, repoUrl }) {
      const integration = await integrations.get(workspaceId, integrationId);
      if (integration.kind === 'git') {
        let dir: string;
        try {
          dir = fileURLToPath(repoUrl);
        } catch {
          throw new HangarError('validation_failed', `repo_url must be the file:// url of a repository listed by git integration ${integration.name}`);
        }
        const rel = path.relative(integration.directory, dir);
        if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
          throw new HangarError('validation_failed', `${repoUrl} is not inside the directory of git integration ${integration.name}`);
        }
        return { cloneUrl: repoUrl };
      }
      const url = new URL(repoUrl);
      const api = new URL(integration.baseUrl);
      const webHost = api.hostname === 'api.github.com' ? 'github.com' : api.hostname;
      if (url.protocol !== 'https:' || url.hostname !== webHost) {
        throw new HangarError('validation_failed', `repo_url must be an https:// URL on ${webHost} for integration ${integration.name}`);
      }
      const creds = await integrations.gitCredentials(workspaceId, integrationId);
      const basic = Buffer.from(`${creds!.username}:${creds!.password}`).toString('base64');
      return {
        cloneUrl: repoUrl,
        env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` },
      };
    },
  };
}
