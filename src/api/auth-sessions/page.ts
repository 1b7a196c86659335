// The small HTML page a browser shows after the OAuth redirect.
import type { CallbackResult } from '../../core/oauth/service.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The page for a callback outcome; every interpolated value is escaped. */
export function callbackPage(result: CallbackResult): string {
  const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
  const title = result.ok ? 'Connected' : 'Authorization failed';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${escape(result.message)}</p></body></html>`;
}
