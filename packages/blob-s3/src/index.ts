/*
 * @pmapi/blob-s3: the S3-compatible BlobStore of pmapi files (AWS S3, MinIO,
 * Cloudflare R2, Backblaze B2, …) on the AWS SDK v3. Clients upload and
 * download through presigned URLs, so the bytes never pass through pmapi.
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore, Disposition } from '@pmapi/core';

/** Where and how an {@link S3BlobStore} keeps its bytes. */
export interface S3BlobStoreOptions {
  /** The bucket holding the bytes. */
  bucket: string;
  /**
   * A key prefix inside the bucket, so several stores (or other data) can share
   * one bucket: key `k` is stored as `${prefix}/${k}` (slashes at the ends of
   * the prefix are trimmed). Default `''`: keys are used as they are.
   */
  prefix?: string;
  /** A client to use; the store never destroys a client it was given. */
  client?: S3Client;
  /**
   * Configuration of the client the store creates when `client` is absent
   * (`endpoint`, `region`, `credentials`, `forcePathStyle`, …).
   */
  clientConfig?: S3ClientConfig;
}

/** A {@link BlobStore} on an S3-compatible bucket, with presigned upload and download URLs. */
export type S3BlobStore = BlobStore & {
  /** The client the store talks to the bucket with. */
  readonly client: S3Client;
  /** Create the bucket when it does not exist yet; calling it again is harmless. */
  ensureBucket(): Promise<void>;
  /** Destroy the client if the store created it (a given client is left alone). */
  close(): void;
};

/** Whether an SDK error says the object (not the bucket) is missing. */
function isMissing(e: unknown): boolean {
  return (
    e instanceof S3ServiceException &&
    e.name !== 'NoSuchBucket' &&
    (e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata.httpStatusCode === 404)
  );
}

/**
 * A `Content-Disposition` value naming `fileName`: an ASCII fallback in
 * `filename` (accents dropped, other non-ASCII as `_`, quotes, backslashes and
 * control characters removed) and the exact name in RFC 5987 `filename*`.
 */
export function contentDisposition(disposition: Disposition, fileName: string): string {
  const ascii = fileName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/["\\\u0000-\u001f\u007f]/g, '')
    .replace(/[^\u0020-\u007e]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * An S3-compatible {@link BlobStore}. Uploads are presigned PutObject URLs
 * with the exact size signed in (S3 refuses a body of any other length);
 * downloads are presigned GetObject URLs that answer with the requested
 * `Content-Disposition`.
 *
 * @example
 * const blobs = createS3BlobStore({
 *   bucket: 'pmapi-files',
 *   clientConfig: { region: 'us-east-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
 * });
 * await blobs.ensureBucket();
 */
export function createS3BlobStore(o: S3BlobStoreOptions): S3BlobStore {
  const owned = !o.client;
  const client = o.client ?? new S3Client(o.clientConfig ?? {});
  const Bucket = o.bucket;
  const prefix = (o.prefix ?? '').replace(/^\/+|\/+$/g, '');
  const keyOf = (key: string) => (prefix ? `${prefix}/${key}` : key);

  return {
    kind: 's3',
    client,

    async ensureBucket() {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
        return;
      } catch (e) {
        if (!(e instanceof S3ServiceException && e.$metadata.httpStatusCode === 404)) throw e;
      }
      try {
        await client.send(new CreateBucketCommand({ Bucket }));
      } catch (e) {
        // Another process may have created it between the two calls.
        if (!(e instanceof S3ServiceException && /^BucketAlready(OwnedByYou|Exists)$/.test(e.name))) throw e;
      }
    },

    close() {
      if (owned) client.destroy();
    },

    presignUpload(key, { expiresInSeconds, size }) {
      // content-length becomes a signed header of the URL: a body of another length breaks the signature.
      const command = new PutObjectCommand({ Bucket, Key: keyOf(key), ContentLength: size });
      // The SDK (since 3.729, requestChecksumCalculation WHEN_SUPPORTED) would sign the CRC32 of the
      // empty presign-time body into the URL, and S3, R2 and MinIO then refuse the real upload.
      command.middlewareStack.add(
        (next) => (args) => {
          const headers = (args.request as { headers?: Record<string, string> }).headers ?? {};
          for (const h of Object.keys(headers)) {
            if (/^x-amz-(checksum-|sdk-checksum-algorithm$)/i.test(h)) delete headers[h];
          }
          return next(args);
        },
        { step: 'build', priority: 'low', name: 'pmapiDropPresignChecksum' },
      );
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },

    presignDownload(key, { expiresInSeconds, fileName, disposition, contentType }) {
      const command = new GetObjectCommand({
        Bucket,
        Key: keyOf(key),
        // pmapi's type for the name, never the one the uploader's PUT declared.
        ResponseContentType: contentType,
        ResponseContentDisposition: contentDisposition(disposition, fileName),
      });
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },

    async put(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket, Key: keyOf(key), Body: bytes, ContentLength: bytes.byteLength }));
    },

    async get(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: keyOf(key) }));
        return out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
      } catch (e) {
        if (isMissing(e)) return undefined;
        throw e;
      }
    },

    async size(key) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: keyOf(key) }));
        return out.ContentLength ?? 0;
      } catch (e) {
        if (isMissing(e)) return undefined;
        throw e;
      }
    },

    async delete(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
      } catch (e) {
        // S3 answers 204 for a missing key; some compatible stores answer 404.
        if (!isMissing(e)) throw e;
      }
    },
  };
}
