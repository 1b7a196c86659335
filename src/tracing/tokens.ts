// Token usage of a model call, read from whatever shape its outputs arrived in: LangChain JS
// (`llmOutput.tokenUsage`, messages with `usage_metadata`), LangChain Python (`llm_output.token_usage`)
// or the SDK's `usage_metadata` in outputs or metadata.
import type { TokenUsage } from './run.js';

/** Token usage found in a model run's outputs or metadata, or null when none is reported. */
export function extractTokenUsage(outputs: unknown, extra?: Record<string, unknown>): TokenUsage | null {
  const found: TokenUsage[] = [];
  collectUsageMetadata(outputs, found, 0);
  if (found.length > 0) return sum(found);
  const fromOutput = findTokenUsage(outputs, 0);
  if (fromOutput) return fromOutput;
  const metadata = (extra?.metadata ?? {}) as Record<string, unknown>;
  return usageFrom(metadata.usage_metadata);
}

/** Every `usage_metadata` object (one per generated message), not descending into a found one. */
function collectUsageMetadata(value: unknown, out: TokenUsage[], depth: number): void {
  if (value === null || typeof value !== 'object' || depth > 8) return;
  if (Array.isArray(value)) {
    for (const v of value) collectUsageMetadata(v, out, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  const usage = usageFrom(record.usage_metadata);
  if (usage) {
    out.push(usage);
    return;
  }
  for (const [k, v] of Object.entries(record)) {
    if (k === 'llmOutput' || k === 'llm_output') continue;
    collectUsageMetadata(v, out, depth + 1);
  }
}

function findTokenUsage(value: unknown, depth: number): TokenUsage | null {
  if (value === null || typeof value !== 'object' || depth > 4) return null;
  const record = value as Record<string, unknown>;
  for (const key of ['tokenUsage', 'token_usage', 'estimatedTokenUsage']) {
    const usage = usageFrom(record[key]);
    if (usage) return usage;
  }
  for (const key of ['llmOutput', 'llm_output']) {
    const usage = findTokenUsage(record[key], depth + 1);
    if (usage) return usage;
  }
  return null;
}

function usageFrom(value: unknown): TokenUsage | null {
  if (value === null || typeof value !== 'object') return null;
  const u = value as Record<string, unknown>;
  const prompt = num(u.input_tokens ?? u.prompt_tokens ?? u.promptTokens);
  const completion = num(u.output_tokens ?? u.completion_tokens ?? u.completionTokens);
  const total = num(u.total_tokens ?? u.totalTokens);
  if (prompt === undefined && completion === undefined && total === undefined) return null;
  return { promptTokens: prompt ?? 0, completionTokens: completion ?? 0, totalTokens: total ?? (prompt ?? 0) + (completion ?? 0) };
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : undefined;
}

function sum(list: TokenUsage[]): TokenUsage {
  return list.reduce(
    (a, b) => ({
      promptTokens: a.promptTokens + b.promptTokens,
      completionTokens: a.completionTokens + b.completionTokens,
      totalTokens: a.totalTokens + b.totalTokens,
    }),
    { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  );
}
