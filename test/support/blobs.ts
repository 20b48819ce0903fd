import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BlobStore } from '../../src/platform/blobs/blobs.js';
import { localBlobStore } from '../../src/platform/blobs/local.js';

/** A real local blob store in a temporary folder, for tests that give a partial context. */
export async function temporaryBlobStore(): Promise<{ blobs: BlobStore; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'repo402-blobs-'));
  return { blobs: localBlobStore(root), cleanup: () => rm(root, { recursive: true, force: true }) };
}
