// Encryption of secrets at rest (tool server headers, OAuth secrets and tokens, deployment secrets):
// AES-256-GCM with a random 96-bit nonce per value, under one 32-byte workspace-independent key.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

const VERSION = 'v1';

/** Encrypts and decrypts secret values. */
export interface Cipher {
  /** The fingerprint of the key that sealed values carry (`v1:<key id>:…`). */
  readonly keyId: string;
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
  encryptJson(value: unknown): string;
  decryptJson<T>(sealed: string): T;
}

/** A cipher under a 32-byte key. Sealed values look like `v1:<key id>:<base64 nonce|tag|ciphertext>`. */
export function createCipher(key: Buffer): Cipher {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  // A short fingerprint of the key, so that a value sealed under another key fails with a clear message.
  const keyId = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  const encrypt = (plaintext: string): string => {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(`${VERSION}:${keyId}`));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${keyId}:${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64')}`;
  };
  const decrypt = (sealed: string): string => {
    const [version, id, payload] = sealed.split(':');
    if (version !== VERSION || payload === undefined) throw new Error('not a sealed secret');
    if (id !== keyId) {
      throw new Error('a secret was encrypted under another key: set HANGAR_SECRET_KEY to the key it was stored with');
    }
    const raw = Buffer.from(payload, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(`${VERSION}:${keyId}`));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  };
  return {
    keyId,
    encrypt,
    decrypt,
    encryptJson: (value) => encrypt(JSON.stringify(value)),
    decryptJson: <T>(sealed: string) => JSON.parse(decrypt(sealed)) as T,
  };
}

/**
 * The secret key: from `HANGAR_SECRET_KEY` when set (64 hex characters or base64 of 32 bytes),
 * otherwise from `secret.key` in the data directory, generated with mode 0600 on first start.
 */
export async function loadSecretKey(options: { configured?: string; dataDir: string }): Promise<Buffer> {
  if (options.configured) return parseKey(options.configured);
  const file = path.join(options.dataDir, 'secret.key');
  if (existsSync(file)) return parseKey((await fs.readFile(file, 'utf8')).trim());
  await fs.mkdir(options.dataDir, { recursive: true });
  const key = randomBytes(32);
  // `wx` fails if another process created the file meanwhile; then use theirs.
  try {
    await fs.writeFile(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch {
    return parseKey((await fs.readFile(file, 'utf8')).trim());
  }
}

function parseKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('HANGAR_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}
