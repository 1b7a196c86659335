import { describe, expect, it } from 'vitest';
import { isSecretKey, REDACTED, RedactingStream, Redactor } from './redact.js';

describe('redaction', () => {
  it('recognises secret keys but not token counts', () => {
    for (const k of ['Authorization', 'api_key', 'apiKey', 'X-Api-Key', 'client_secret', 'password', 'access_token', 'idToken', 'token', 'Cookie']) {
      expect(isSecretKey(k), k).toBe(true);
    }
    for (const k of ['total_tokens', 'max_tokens', 'token_usage', 'tokenUsage', 'input_tokens', 'name', 'query']) {
      expect(isSecretKey(k), k).toBe(false);
    }
  });

  it('redacts values under secret keys, header pairs, bearer tokens, key shapes and known values', () => {
    const r = new Redactor(['plain-known-secret-value']);
    const out = r.value({
      headers: [{ key: 'Authorization', value: 'anything at all' }, { key: 'X-Team', value: 'blue' }],
      nested: { api_key: 'abc', usage_metadata: { total_tokens: 12 } },
      text: 'call with Bearer abcdefghijklmnop and sk-ABCDEFGHIJKLMNOPQRST then plain-known-secret-value.',
      list: ['hgr_0123456789abcdefghijklmnop'],
    });
    expect(out).toEqual({
      headers: [{ key: 'Authorization', value: REDACTED }, { key: 'X-Team', value: 'blue' }],
      nested: { api_key: REDACTED, usage_metadata: { total_tokens: 12 } },
      text: `call with Bearer ${REDACTED} and ${REDACTED} then ${REDACTED}.`,
      list: [REDACTED],
    });
  });
});

describe('RedactingStream: text that arrives in pieces', () => {
  const SECRET = 'deploy-value-5c2e8a1f7b';
  const through = (pieces: string[], known = [SECRET]) => {
    const s = new RedactingStream(new Redactor(known), known);
    return pieces.map((p) => s.write(p)).join('') + s.end();
  };

  it('redacts a known secret written in two pieces, wherever it is cut', () => {
    const line = `starting with API_KEY=${SECRET} and more\n`;
    for (let i = 1; i < line.length; i++) {
      const out = through([line.slice(0, i), line.slice(i)]);
      expect(out, `cut at ${i}`).toBe('starting with API_KEY=[redacted] and more\n');
    }
  });

  it('redacts a known secret written a character at a time, and a secret-looking key cut in two', () => {
    expect(through([...`x=${SECRET};\n`])).toBe('x=[redacted];\n');
    const key = 'sk-abcdefghijklmnopqrstuvwx';
    for (let i = 1; i < key.length; i++) expect(through(['key ', key.slice(0, i), `${key.slice(i)}\n`])).toBe('key [redacted]\n');
    expect(through(['Authorization: Bear', 'er abcdefgh', 'ijklmnop\n'])).toBe('Authorization: Bearer [redacted]\n');
  });

  it('gives out at once what cannot begin a secret, and the rest at the end', () => {
    const s = new RedactingStream(new Redactor([SECRET]), [SECRET]);
    expect(s.write('listening on :8000\n')).toBe('listening on :8000\n');
    expect(s.write('ready; deploy-val')).toBe('ready; ');
    expect(s.end()).toBe('deploy-val');
  });
});
