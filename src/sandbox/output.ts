// A command's output, kept up to a cap: both drivers collect stdout this way.

/** Keeps output up to `cap` bytes, hands each kept chunk on, and calls `onLimit` once when the cap is passed. */
export class CappedOutput {
  readonly chunks: Buffer[] = [];
  truncated = false;
  private size = 0;

  constructor(
    private readonly cap: number,
    private readonly onChunk: ((chunk: Buffer) => void) | undefined,
    private readonly onLimit: () => void,
  ) {}

  readonly take = (chunk: Buffer): void => {
    if (this.truncated) return;
    const room = this.cap - this.size;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length > 0) {
      this.chunks.push(kept);
      this.size += kept.length;
      this.onChunk?.(kept);
    }
    if (chunk.length > room) {
      this.truncated = true;
      this.onLimit();
    }
  };
}
