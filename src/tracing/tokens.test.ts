import { describe, expect, it } from 'vitest';
import { extractTokenUsage } from './tokens.js';

describe('extractTokenUsage', () => {
  it('sums usage_metadata of generated messages (LangChain JS outputs)', () => {
    const outputs = { generations: [[{ message: { type: 'ai', usage_metadata: { input_tokens: 10, output_tokens: 2, total_tokens: 12 } } }, { message: { usage_metadata: { input_tokens: 1, output_tokens: 1 } } }]], llmOutput: { tokenUsage: { promptTokens: 99 } } };
    expect(extractTokenUsage(outputs)).toEqual({ promptTokens: 11, completionTokens: 3, totalTokens: 14 });
  });

  it('falls back to llm_output.token_usage, then to metadata', () => {
    expect(extractTokenUsage({ llm_output: { token_usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } } })).toEqual({ promptTokens: 5, completionTokens: 7, totalTokens: 12 });
    expect(extractTokenUsage({ text: 'x' }, { metadata: { usage_metadata: { input_tokens: 3, output_tokens: 4 } } })).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    expect(extractTokenUsage({ text: 'no usage' })).toBeNull();
  });
});
