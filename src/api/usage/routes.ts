// GET /v1/deepagents/usage: runs, tokens and errors per agent and model over a time range.
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';

const UsageRowSchema = z
  .object({
    agent_id: z.uuid(),
    model: z.string().openapi({ description: 'The model that served the runs; for runs that ended before their agent was built (cancelled while queued, failed at start), the model their agent names. `unknown` when that could not be read (the agent was deleted).' }),
    runs: z.number().int(),
    errors: z.number().int().openapi({ description: 'Runs that ended `error` or `timeout`.' }),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
  })
  .openapi('UsageRow');

const UsageSchema = z
  .object({
    start: z.iso.datetime(),
    end: z.iso.datetime(),
    items: z.array(UsageRowSchema),
    totals: UsageRowSchema.omit({ agent_id: true, model: true }),
  })
  .openapi('Usage');

const usage = createRoute({
  method: 'get',
  path: '/v1/deepagents/usage',
  tags: ['Usage'],
  summary: 'Usage per agent and model',
  description:
    'Runs created in [`start`, `end`) per agent and model, with tokens in and out and errors. Runs of threads created with `options.test_run` are not counted. ' +
    'Default range: the 30 days before `end` (default now).',
  security: apiKeySecurity,
  request: {
    query: z.object({
      start: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Start of the range (inclusive), ISO 8601.' }),
      end: z.iso.datetime({ offset: true }).optional().openapi({ description: 'End of the range (exclusive), ISO 8601. Default now.' }),
      agent_id: z.uuid({ message: 'must be a UUID' }).optional().openapi({ description: 'Only this agent.' }),
    }),
  },
  responses: { 200: jsonResponse(UsageSchema, 'The usage report.'), ...errorResponses('deepagents', [422]) },
});

/** Routes of usage reports. */
export function usageRoutes({ services }: AppDeps) {
  return newRouter().openapi(usage, async (c) => {
    const q = c.req.valid('query');
    const report = await services.usage.report(c.get('caller'), {
      start: q.start ? new Date(q.start) : undefined,
      end: q.end ? new Date(q.end) : undefined,
      agentId: q.agent_id,
    });
    const items = report.rows.map((r) => ({
      agent_id: r.agentId,
      model: r.model,
      runs: r.runs,
      errors: r.errors,
      input_tokens: r.inputTokens,
      output_tokens: r.outputTokens,
    }));
    const sum = (k: 'runs' | 'errors' | 'input_tokens' | 'output_tokens') => items.reduce((n, i) => n + i[k], 0);
    return c.json(
      {
        start: report.start.toISOString(),
        end: report.end.toISOString(),
        items,
        totals: { runs: sum('runs'), errors: sum('errors'), input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens') },
      },
      200,
    );
  });
}
