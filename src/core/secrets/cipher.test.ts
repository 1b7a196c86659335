import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCipher, loadSecretKey } from './cipher.js';

describe('cipher', () => {
  const cipher = createCipher(randomBytes(32));

  it('round-trips and never repeats a ciphertext', () => {
    const a = cipher.encrypt('Bearer secret');
    const b = cipher.encrypt('Bearer secret');
    expect(a).not.toBe(b);
    expect(a).not.toContain('secret');
    expect(cipher.decrypt(a)).toBe('Bearer secret');
    expect(cipher.decryptJson(cipher.encryptJson([{ key: 'k', value: 'v' }]))).toEqual([{ key: 'k', value: 'v' }]);
  });

  it('detects tampering and a different key', () => {
    const sealed = cipher.encrypt('value');
    const raw = Buffer.from(sealed.split(':')[2]!, 'base64');
    raw[raw.length - 1]! ^= 1;
    const tampered = `${sealed.split(':').slice(0, 2).join(':')}:${raw.toString('base64')}`;
    expect(() => cipher.decrypt(tampered)).toThrow();
    expect(() => createCipher(randomBytes(32)).decrypt(sealed)).toThrow(/another key/);
  });

  it('generates a 0600 key file once and reuses it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-key-'));
    const first = await loadSecretKey({ dataDir: dir });
    const second = await loadSecretKey({ dataDir: dir });
    expect(first.equals(second)).toBe(true);
    expect((await stat(path.join(dir, 'secret.key'))).mode & 0o777).toBe(0o600);
    expect((await readFile(path.join(dir, 'secret.key'), 'utf8')).trim()).toBe(first.toString('hex'));
    const configured = await loadSecretKey({ dataDir: dir, configured: 'cd'.repeat(32) });
    expect(configured.toString('hex')).toBe('cd'.repeat(32));
  });
});
