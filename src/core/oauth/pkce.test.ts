import { describe, expect, it } from 'vitest';
import { codeChallenge, newCodeVerifier } from './pkce.js';

describe('PKCE', () => {
  it('computes the S256 challenge of RFC 7636 appendix B', () => {
    expect(codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'S256')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('plain is the verifier itself', () => {
    expect(codeChallenge('abc', 'plain')).toBe('abc');
  });

  it('verifiers are 43 unreserved characters and differ each time', () => {
    const a = newCodeVerifier();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newCodeVerifier()).not.toBe(a);
  });
});
