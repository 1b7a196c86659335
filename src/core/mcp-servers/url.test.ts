import { describe, expect, it } from 'vitest';
import { isCredentialParam, redactServerUrl, redactUrlsIn, urlSecrets } from './url.js';

describe('isCredentialParam', () => {
  it('calls a value a credential by its name, or by its shape', () => {
    expect(isCredentialParam('api_key', 'SECRET')).toBe(true);
    expect(isCredentialParam('X-Amz-Signature', 'abc')).toBe(true);
    expect(isCredentialParam('code', 'hello')).toBe(true);
    expect(isCredentialParam('k', 'zq7x')).toBe(true);
    expect(isCredentialParam('id', '5f1e0c7d9a2b')).toBe(true);
    expect(isCredentialParam('x', 'correcthorsebatterystaple')).toBe(true);
    expect(isCredentialParam('mode', 'stream')).toBe(false);
    expect(isCredentialParam('version', '2025-03-26')).toBe(false);
    expect(isCredentialParam('region', 'eu-west-1')).toBe(false);
    expect(isCredentialParam('token', '')).toBe(false);
  });
});

describe('display form and trace secrets agree', () => {
  it('redacts the credential and keeps the setting', () => {
    const url = 'https://mcp.example/sse?api_key=SECRET1&mode=stream';
    expect(redactServerUrl(url)).toBe('https://mcp.example/sse?api_key=[redacted]&mode=stream');
    expect(urlSecrets(url)).toEqual(['SECRET1', url]);
    expect(urlSecrets('https://mcp.example/sse?mode=stream')).toEqual([]);
    expect(redactServerUrl('https://mcp.example/sse?mode=stream')).toBe('https://mcp.example/sse?mode=stream');
  });

  it('finds URLs with a credential in free text, keeping interrupt tool names and sentence ends', () => {
    expect(redactUrlsIn('Call https://h.example/mcp?token=abc&mode=stream::search, or see https://docs.example/a#b.')).toBe(
      'Call https://h.example/mcp?token=[redacted]&mode=stream::search, or see https://docs.example/a#b.',
    );
    expect(redactUrlsIn('"http://[::1]:8080/mcp?key=s3cr3t"')).toBe('"http://[::1]:8080/mcp?key=[redacted]"');
  });
});
