import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often to look again at a file another process has created but not yet written (20 ms apart). */
const WRITE_WAIT_ATTEMPTS = 50;

/**
 * A per-installation secret of `bytes` random bytes kept as hex in `file` (mode 0600): created
 * when absent, else read. Processes racing to create it end up with the same one: the losers of
 * the exclusive create read the winner's, waiting while it is still being written.
 */
export async function loadOrCreateSecretFile(file: string, bytes = 32): Promise<Buffer> {
  const secret = randomBytes(bytes);
  try {
    await writeFile(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (let attempt = 0; attempt < WRITE_WAIT_ATTEMPTS; attempt++) {
    const text = (await readFile(file, 'utf8')).trim();
    if (text.length === bytes * 2 && /^[0-9a-f]+$/i.test(text)) return Buffer.from(text, 'hex');
    await sleep(20);
  }
  throw new Error(`${file} does not hold ${bytes} bytes as hex: fix or remove it`);
}
