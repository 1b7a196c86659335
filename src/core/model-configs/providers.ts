// The model providers this build of Hangar can run: the built-in `scripted` model, and the LangChain
// providers whose packages it ships (src/runtime/models/resolve.ts builds them with `initChatModel`).
// A saved model configuration or an agent naming another provider could never run, so it is refused
// at save (one check for both: `providerModelIdProblem`).

/** Providers a `<provider>:<model_id>` may name. */
export const KNOWN_PROVIDERS = ['scripted', 'openai', 'azure_openai', 'anthropic', 'google-genai', 'ollama'] as const;

/** Whether `provider` is one this server can build a model of. */
export function isKnownProvider(provider: string): boolean {
  return (KNOWN_PROVIDERS as readonly string[]).includes(provider);
}

/** `<provider>:<model_id>`: a provider of lower-case letters, digits, `_`, `-` or `.`, then a non-empty id. */
const PROVIDER_MODEL_ID = /^[a-z0-9][a-z0-9_.-]*:\S.*$/;

/** What is wrong with a `<provider>:<model_id>` (its form, then its provider), or undefined when it can run. */
export function providerModelIdProblem(modelId: string): string | undefined {
  if (!PROVIDER_MODEL_ID.test(modelId)) return `"${modelId}" is not of the form <provider>:<model_id> (for example "anthropic:claude-sonnet-4-6")`;
  const provider = modelId.slice(0, modelId.indexOf(':'));
  if (!isKnownProvider(provider)) return `unknown provider "${provider}"; known providers: ${KNOWN_PROVIDERS.join(', ')}`;
  return undefined;
}
