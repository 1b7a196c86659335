// Small helpers shared by the tests that drive Hangar through the official LangGraph SDK.

/** A run body with one human message, as the SDK sends it. */
export const human = (content: string) => ({ input: { messages: [{ type: 'human', content }] } });

/** The status and message of what `promise` rejects with (the SDK's HTTPError), 200 when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { status: (error as { status?: number }).status ?? -1, message: String((error as Error).message) };
  }
  return { status: 200, message: '' };
}
