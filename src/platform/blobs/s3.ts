import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  GetObjectCommand,
  HeadBucketCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../../config.js';
import { assertBlobKey, BlobNotFoundError, type BlobStore } from './blobs.js';

/** Blobs in an S3-compatible bucket (AWS, MinIO, R2…); downloads can be presigned GET URLs. */
export function s3BlobStore(config: S3Config): BlobStore {
  const client = s3Client(config, config.endpoint);
  // Presigning sends nothing: this client only signs URLs for the host buyers reach.
  const presigner = config.publicEndpoint ? s3Client(config, config.publicEndpoint) : client;
  const objectKey = (key: string) => {
    assertBlobKey(key);
    return config.prefix ? `${config.prefix}/${key}` : key;
  };
  return {
    kind: 's3',
    async ping() {
      await client.send(new HeadBucketCommand({ Bucket: config.bucket }));
    },
    async putFile(key, file, contentType) {
      const { size } = await stat(file);
      await client.send(
        new PutObjectCommand({
          Bucket: config.bucket,
          Key: objectKey(key),
          Body: createReadStream(file),
          ContentLength: size,
          ContentType: contentType,
        }),
      );
    },
    async putBytes(key, bytes, contentType) {
      await client.send(
        new PutObjectCommand({
          Bucket: config.bucket,
          Key: objectKey(key),
          Body: bytes,
          ContentType: contentType,
        }),
      );
    },
    async open(key) {
      try {
        const object = await client.send(
          new GetObjectCommand({ Bucket: config.bucket, Key: objectKey(key) }),
        );
        return { stream: object.Body as Readable, sizeBytes: Number(object.ContentLength ?? 0) };
      } catch (error) {
        if (error instanceof NoSuchKey) throw new BlobNotFoundError(key);
        throw error;
      }
    },
    presignGet(key, seconds) {
      return getSignedUrl(presigner, new GetObjectCommand({ Bucket: config.bucket, Key: objectKey(key) }), {
        expiresIn: seconds,
      });
    },
  };
}

function s3Client(config: S3Config, endpoint: string | undefined): S3Client {
  return new S3Client({
    region: config.region,
    endpoint,
    forcePathStyle: config.forcePathStyle,
    // Checksums only where S3 requires them: S3-compatible stores (MinIO, R2, older Ceph) differ
    // in their support for the SDK's default trailing checksums on streamed uploads.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials:
      config.accessKeyId && config.secretAccessKey
        ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
        : undefined,
  });
}
