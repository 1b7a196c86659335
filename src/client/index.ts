// The typed Hangar client: openapi-fetch over the generated `paths` of Hangar's OpenAPI document.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { paths, components } from './schema.js';

/** A client of one Hangar server, authenticated with one API key. */
export type HangarClient = Client<paths>;

/** Create a client for `baseUrl` that sends `apiKey` as `X-Api-Key`. */
export function createHangarClient(options: { baseUrl: string; apiKey?: string; fetch?: typeof fetch }): HangarClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey ? { 'X-Api-Key': options.apiKey } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
