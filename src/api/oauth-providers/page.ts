// The control plane's list paging: `limit` 1..100 (default 20) and `offset` >= 0 (default 0).
import { z } from '@hono/zod-openapi';

/** Query parameters of a control-plane list. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: 'Largest number of resources returned (1..100).' }),
  offset: z.coerce.number().int().min(0).default(0).openapi({ description: 'Offset of the first resource.' }),
});
