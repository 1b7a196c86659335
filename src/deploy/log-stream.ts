// One stream of output on its way into a revision's log: terminal control codes removed, then
// secrets redacted, in that order (a code written inside a secret would otherwise hide it from the
// redaction and vanish only afterwards, leaving the secret whole in the stored log).
import { stripVTControlCharacters } from 'node:util';
import { RedactingStream, Redactor } from '../tracing/redact.js';

/** A control sequence cut at the end of a piece is held back this far for the next piece to complete. */
const MAX_HELD_SEQUENCE = 64;

/** Redacted, control-code-free text of one stream that arrives in pieces. */
export class CleanRedactingStream {
  private pending = '';
  private readonly redacting: RedactingStream;

  constructor(secrets: string[]) {
    this.redacting = new RedactingStream(new Redactor(secrets), secrets);
  }

  /** What can be given out now. */
  write(text: string): string {
    const buf = this.pending + text;
    const cut = sequenceStart(buf);
    this.pending = buf.slice(cut);
    return cut > 0 ? this.redacting.write(stripVTControlCharacters(buf.slice(0, cut))) : '';
  }

  /** The rest (the stream ended). */
  end(): string {
    const rest = this.pending;
    this.pending = '';
    return (rest ? this.redacting.write(stripVTControlCharacters(rest)) : '') + this.redacting.end();
  }
}

/**
 * Where a control sequence that may not be complete yet starts at the end of `buf` (buf.length: none):
 * the last ESC or CSI of its last MAX_HELD_SEQUENCE characters, unless a line ended after it.
 */
function sequenceStart(buf: string): number {
  for (let i = buf.length - 1; i >= 0 && i >= buf.length - MAX_HELD_SEQUENCE; i--) {
    const c = buf.charCodeAt(i);
    if (c === 0x0a) return buf.length;
    if (c === 0x1b || c === 0x9b) return i;
  }
  return buf.length;
}
