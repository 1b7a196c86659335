// Operator commands talk to the database directly: the configured one, the embedded cluster of a
// running server, or the embedded cluster started just for the command.
import { prepareDataDir } from '../config/data-dir.js';
import type { Config } from '../config/index.js';
import { createServices, type Services } from '../core/services.js';
import { createCipher, loadSecretKey } from '../core/secrets/cipher.js';
import { ensureDatabase, runningEmbeddedDatabase, startEmbeddedDatabase } from '../db/embedded.js';
import { openDatabase, reachConfiguredDatabase } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../logging.js';

/** Run `work` with the services of the configured database, then close everything. */
export async function withServices<T>(config: Config, work: (services: Services) => Promise<T>): Promise<T> {
  const dataDir = await prepareDataDir(config.dataDir);
  let url = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const embedded =
      (await runningEmbeddedDatabase(config.dataDir)) ??
      // A refused start leaves no empty data directory behind (the folders it created for nothing).
      (await startEmbeddedDatabase({ dir: config.dataDir }).catch(async (error: unknown) => {
        await dataDir.undo();
        throw error;
      }));
    stopEmbedded = () => embedded.stop();
    // A first command before any server start creates the database the server would create.
    url = await ensureDatabase(embedded, 'hangar');
  }
  const database = openDatabase(url, { max: 2 });
  try {
    if (config.databaseUrl) await reachConfiguredDatabase(database.pool, config.databaseUrl);
    await migrate(database.pool);
    const cipher = createCipher(await loadSecretKey({ configured: config.secretKey, dataDir: config.dataDir }));
    const services = createServices({ db: database.db, cipher, logger: createLogger({ level: 'silent' }) });
    await services.workspaces.ensureDefaultWorkspace();
    return await work(services);
  } finally {
    await database.close();
    await stopEmbedded?.();
  }
}
