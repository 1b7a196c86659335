// LangGraph's store endpoints (what `client.store.*` of @langchain/langgraph-sdk calls): the
// long-term store where agents keep /memories/. Namespaces are relative to the caller's workspace.
import { createRoute, z } from '@hono/zod-openapi';
import type { StoreItem } from '../../core/store/service.js';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const tags = ['Store (LangGraph)'];
const BASE = '/v1/deepagents/store';

const SCOPE =
  'Namespaces are relative to the key’s workspace: an agent’s memories (`/memories/`) are `[agent_id, "memories"]`, a principal’s (`/memories/user/`) ' +
  '`[agent_id, "memories", "user", "p-" + base64url(principal)]`. Another principal’s memories are reachable by admins only.';

// Bounded: PostgreSQL's index entries are limited in size, and nothing needs longer labels or keys.
const Namespace = z.array(z.string().max(256)).max(20).openapi({ description: 'Namespace labels (no periods, and none of "%", "_" or "\\"), relative to the workspace.', example: ['3f1c2a9e-0000-4000-8000-000000000000', 'memories'] });

const ItemSchema = z
  .object({
    namespace: Namespace,
    key: z.string().max(1024),
    value: z.record(z.string(), z.unknown()),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('StoreItem');

const PutBody = z
  .object({
    namespace: Namespace,
    key: z.string().max(1024),
    value: z.record(z.string(), z.unknown()).openapi({ description: 'The item’s data. Memory files are `{content, created_at, modified_at}`.' }),
    index: z.union([z.literal(false), z.null(), z.array(z.string())]).optional().openapi({ description: 'Accepted; the store has no vector index, so items are not embedded.' }),
    ttl: z.null().optional().openapi({ description: 'Expiry is not supported: `null` or absent.' }),
  })
  .openapi('StorePutItemRequest');

const DeleteBody = z.object({ namespace: Namespace.default([]), key: z.string() }).openapi('StoreDeleteItemRequest');

const SearchBody = z
  .object({
    namespace_prefix: Namespace.default([]).openapi({ description: 'Items in this namespace and below it; `[]` is the whole workspace.' }),
    filter: z.record(z.string(), z.unknown()).nullable().optional().openapi({ description: 'Exact matches on fields of `value`.' }),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    query: z.null().optional().openapi({ description: 'Semantic search is not configured: `null` or absent.' }),
    refresh_ttl: z.boolean().nullable().optional().openapi({ description: 'Accepted; items do not expire.' }),
  })
  .openapi('StoreSearchItemsRequest');

const NamespacesBody = z
  .object({
    prefix: Namespace.optional(),
    suffix: Namespace.optional(),
    max_depth: z.number().int().min(1).max(100).optional().openapi({ description: 'Truncate namespaces to this many labels (counted from the workspace).' }),
    limit: z.number().int().min(1).max(1000).default(100),
    offset: z.number().int().min(0).default(0),
  })
  .openapi('StoreListNamespacesRequest');

function present(item: StoreItem): z.infer<typeof ItemSchema> {
  return { namespace: item.namespace, key: item.key, value: item.value, created_at: item.createdAt.toISOString(), updated_at: item.updatedAt.toISOString() };
}

const put = createRoute({
  method: 'put',
  path: `${BASE}/items`,
  operationId: 'putStoreItem',
  tags,
  summary: 'Store or replace an item',
  description: `${SCOPE} Viewers may not write (403).`,
  security: apiKeySecurity,
  request: { body: jsonBody(PutBody) },
  responses: { 204: { description: 'Stored.' }, ...errorResponses('deepagents', [413, 415, 422]) },
});

const get = createRoute({
  method: 'get',
  path: `${BASE}/items`,
  operationId: 'getStoreItem',
  tags,
  summary: 'Get an item',
  description: `${SCOPE} Answers \`null\` when there is no such item (as LangGraph servers do).`,
  security: apiKeySecurity,
  request: {
    query: z.object({
      namespace: z.string().default('').openapi({ description: 'The namespace labels joined with periods.' }),
      key: z.string().openapi({ description: 'The item’s key.' }),
      refresh_ttl: z.string().optional().openapi({ description: 'Accepted; items do not expire.' }),
    }),
  },
  responses: { 200: jsonResponse(z.union([ItemSchema, z.null()]), 'The item, or `null`.'), ...errorResponses('deepagents', [422]) },
});

const remove = createRoute({
  method: 'delete',
  path: `${BASE}/items`,
  operationId: 'deleteStoreItem',
  tags,
  summary: 'Delete an item',
  description: `${SCOPE} Idempotent. Viewers may not delete (403).`,
  security: apiKeySecurity,
  request: { body: jsonBody(DeleteBody) },
  responses: { 204: { description: 'Deleted (or there was none).' }, ...errorResponses('deepagents', [415, 422]) },
});

const search = createRoute({
  method: 'post',
  path: `${BASE}/items/search`,
  operationId: 'searchStoreItems',
  tags,
  summary: 'Search items under a namespace prefix',
  description: `${SCOPE} Most recently changed first.`,
  security: apiKeySecurity,
  request: { body: jsonBody(SearchBody) },
  responses: { 200: jsonResponse(z.object({ items: z.array(ItemSchema) }).openapi('StoreSearchItemsResponse'), 'Matching items.'), ...errorResponses('deepagents', [400, 415, 422]) },
});

const namespaces = createRoute({
  method: 'post',
  path: `${BASE}/namespaces`,
  operationId: 'listStoreNamespaces',
  tags,
  summary: 'List namespaces',
  description: SCOPE,
  security: apiKeySecurity,
  request: { body: jsonBody(NamespacesBody) },
  responses: {
    200: jsonResponse(z.object({ namespaces: z.array(Namespace) }).openapi('StoreListNamespacesResponse'), 'Namespaces holding items.'),
    ...errorResponses('deepagents', [400, 415, 422]),
  },
});

/** Routes of LangGraph's store. */
export function storeRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(put, async (c) => {
      const body = c.req.valid('json');
      await services.store.put(c.get('caller'), body.namespace, body.key, body.value);
      return c.body(null, 204);
    })
    .openapi(get, async (c) => {
      const query = c.req.valid('query');
      const item = await services.store.get(c.get('caller'), query.namespace === '' ? [] : query.namespace.split('.'), query.key, 'query');
      return c.json(item ? present(item) : null, 200);
    })
    .openapi(remove, async (c) => {
      const body = c.req.valid('json');
      await services.store.delete(c.get('caller'), body.namespace, body.key);
      return c.body(null, 204);
    })
    .openapi(search, async (c) => {
      const body = c.req.valid('json');
      const items = await services.store.search(c.get('caller'), body.namespace_prefix, { filter: body.filter ?? undefined, limit: body.limit, offset: body.offset });
      return c.json({ items: items.map(present) }, 200);
    })
    .openapi(namespaces, async (c) => {
      const body = c.req.valid('json');
      return c.json({ namespaces: await services.store.listNamespaces(c.get('caller'), { prefix: body.prefix, suffix: body.suffix, maxDepth: body.max_depth, limit: body.limit, offset: body.offset }) }, 200);
    });
}
