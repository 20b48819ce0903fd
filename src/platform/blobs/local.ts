import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants, copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertBlobKey, BlobNotFoundError, type BlobStore } from './blobs.js';

/** Blobs as files under `root` (DATA_DIR/blobs). Writes go to a temporary name and are renamed into place. */
export function localBlobStore(root: string): BlobStore {
  const fileOf = (key: string) => {
    assertBlobKey(key);
    return path.join(root, ...key.split('/'));
  };
  const place = async (key: string, write: (temporary: string) => Promise<void>) => {
    const target = fileOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      await write(temporary);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  };
  return {
    kind: 'local',
    async ping() {
      await mkdir(root, { recursive: true });
      await access(root, constants.W_OK);
    },
    putFile: (key, file) => place(key, (temporary) => copyFile(file, temporary)),
    putBytes: (key, bytes) => place(key, (temporary) => writeFile(temporary, bytes)),
    async open(key) {
      const file = fileOf(key);
      const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw new BlobNotFoundError(key);
        throw error;
      });
      return { stream: createReadStream(file), sizeBytes: info.size };
    },
  };
}
