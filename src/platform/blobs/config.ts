import path from 'node:path';
import type { Config } from '../../config.js';
import type { BlobStore } from './blobs.js';
import { localBlobStore } from './local.js';

/** The configured store: S3 when S3_BUCKET is set (the SDK is loaded only then), else DATA_DIR/blobs. */
export async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3) return (await import('./s3.js')).s3BlobStore(config.s3);
  return localBlobStore(path.join(config.dataDir, 'blobs'));
}
