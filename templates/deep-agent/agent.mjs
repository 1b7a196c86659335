// A deep agent (deepagents' createDeepAgent on LangGraph): planning, a virtual file system and
// subagents out of the box. Choose the model with the MODEL secret (`<provider>:<model>`, for example
// `anthropic:claude-sonnet-4-5` with ANTHROPIC_API_KEY, or `openai:gpt-4.1` with OPENAI_API_KEY).
import { createDeepAgent } from 'deepagents';

export const agent = createDeepAgent({
  model: process.env.MODEL ?? 'anthropic:claude-sonnet-4-5',
  systemPrompt:
    process.env.INSTRUCTIONS ??
    'You are a careful research assistant. Plan your work with the todo list, keep notes in files, and answer concisely.',
});
