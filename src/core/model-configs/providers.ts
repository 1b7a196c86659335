// The model providers this build of Hangar can run: the built-in `scripted` model, and the LangChain
// providers whose packages it ships (src/runtime/models/resolve.ts builds them with `initChatModel`).
// A saved model configuration naming another provider could never run, so it is refused at save.

/** Providers a `<provider>:<model_id>` may name. */
export const KNOWN_PROVIDERS = ['scripted', 'openai', 'azure_openai', 'anthropic', 'google-genai', 'ollama'] as const;

/** Whether `provider` is one this server can build a model of. */
export function isKnownProvider(provider: string): boolean {
  return (KNOWN_PROVIDERS as readonly string[]).includes(provider);
}
