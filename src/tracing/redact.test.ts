import { describe, expect, it } from 'vitest';
import { isSecretKey, REDACTED, Redactor } from './redact.js';

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
