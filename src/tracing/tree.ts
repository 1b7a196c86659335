// Assembling a trace: runs nested under their parents, token counts rolled up to the ancestors.
import type { TokenUsage, TraceRun, TraceRunTree } from './run.js';

/** Nest runs (sorted by dotted order) under their parents; model-run tokens roll up to ancestors. */
export function buildTree(runs: TraceRun[], rootId: string): TraceRunTree | undefined {
  const byId = new Map<string, TraceRunTree>(runs.map((r) => [r.id, { ...r, children: [] }]));
  for (const node of byId.values()) {
    if (node.id !== rootId && node.parentRunId) byId.get(node.parentRunId)?.children.push(node);
  }
  const root = byId.get(rootId);
  if (root) rollUpTokens(root);
  return root;
}

function rollUpTokens(node: TraceRunTree): TokenUsage | null {
  if (node.runType === 'llm') {
    node.children.forEach(rollUpTokens);
    return node.tokens;
  }
  let total = null as TokenUsage | null;
  for (const child of node.children) {
    const t = rollUpTokens(child);
    if (!t) continue;
    total = {
      promptTokens: (total?.promptTokens ?? 0) + t.promptTokens,
      completionTokens: (total?.completionTokens ?? 0) + t.completionTokens,
      totalTokens: (total?.totalTokens ?? 0) + t.totalTokens,
    };
  }
  node.tokens = total;
  return total;
}
