// Which driver serves which source, from the HANGAR_DEPLOY_DRIVERS setting.
import type { DriverRouting } from '../core/deployments/ports.js';
import { SOURCES, type Source } from '../core/deployments/types.js';

/** Parse `source=driver,…`; unknown sources stop start-up with a message naming them. */
export function parseRouting(setting: string): DriverRouting & { drivers: Set<string> } {
  const map = new Map<Source, string>();
  for (const part of setting.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [source, driver] = part.split('=').map((s) => s.trim()) as [string, string];
    if (!(SOURCES as readonly string[]).includes(source)) {
      throw new Error(`HANGAR_DEPLOY_DRIVERS: unknown source "${source}" (sources: ${SOURCES.join(', ')})`);
    }
    map.set(source as Source, driver);
  }
  return { driverFor: (source) => map.get(source), drivers: new Set(map.values()) };
}
