// Reading an answer from a server Hangar does not trust to stop: at most a given number of bytes.

/** The answer went past the limit (what is left of it was cancelled). */
export class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer is longer than ${maxBytes} bytes`);
  }
}

/**
 * The body of `response` as UTF-8 text, at most `maxBytes`: past it the rest is cancelled and
 * `BodyTooLarge` thrown. When the body stops arriving (the request's timeout, a broken connection)
 * the stream's own error is thrown.
 */
export async function readTextBounded(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
