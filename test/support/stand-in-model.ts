// A stand-in for a model provider (an unreachable SaaS in tests): a LangChain chat model that answers
// from a script, reporting token usage and tool calls the way provider integrations do.
import { BaseChatModel, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

/** One scripted answer. */
export interface ScriptedAnswer {
  content: string;
  toolCalls?: { name: string; args: Record<string, unknown>; id: string }[];
  inputTokens: number;
  outputTokens: number;
}

/** Chat model standing in for a provider: answers in order, then repeats the last answer. */
export class StandInProviderModel extends BaseChatModel {
  private calls = 0;

  constructor(
    private readonly script: ScriptedAnswer[],
    private readonly modelName = 'stand-in-model-1',
    params: BaseChatModelParams = {},
  ) {
    super(params);
  }

  _llmType(): string {
    return 'stand-in-provider';
  }

  override getLsParams(options: this['ParsedCallOptions']) {
    return { ...super.getLsParams(options), ls_provider: 'stand-in-provider', ls_model_name: this.modelName, ls_model_type: 'chat' as const };
  }

  /** Tools are accepted and ignored: the script decides which tool calls are made. */
  override bindTools(): this {
    return this;
  }

  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const answer = this.script[Math.min(this.calls++, this.script.length - 1)]!;
    const message = new AIMessage({
      content: answer.content,
      tool_calls: (answer.toolCalls ?? []).map((c) => ({ ...c, type: 'tool_call' as const })),
      usage_metadata: { input_tokens: answer.inputTokens, output_tokens: answer.outputTokens, total_tokens: answer.inputTokens + answer.outputTokens },
    });
    return { generations: [{ text: answer.content, message }] };
  }
}
