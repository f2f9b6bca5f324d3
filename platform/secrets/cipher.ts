/**
 * Encryption of secret values at rest: AES-256-GCM, a fresh 96-bit IV per value, the workspace and
 * secret name bound as additional authenticated data (a sealed value copied to another row won't open).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SecretCipher {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export function createSecretCipher(secretsKey: string): SecretCipher {
  // Any string works as SECRETS_KEY; hashing gives a uniform 256-bit key from it.
  const key = createHash('sha256').update(secretsKey, 'utf8').digest();
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    open(sealed, context) {
      const raw = Buffer.from(sealed, 'base64');
      // A pinned tag length: a truncated tag must not pass for a short valid one.
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12), { authTagLength: 16 });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * SECRETS_KEY, or in development a key generated once into DATA_DIR/secrets.key (mode 0600), so a
 * newcomer needs no setup and restarts keep reading old secrets.
 */
export function loadOrCreateSecretsKey(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = path.join(dataDir, 'secrets.key');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64');
  try {
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw error;
  }
}
