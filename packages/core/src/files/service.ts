import { createHmac } from 'node:crypto';
import type { BlobStore, Disposition, Thumbnailer, UrlFetcher } from './ports';
import { signBlobLink } from './links';
import { ProblemError } from '../errors/problem';

/** Spec "File": the largest size a file may declare. */
export const FILE_SIZE_MAX = 2_147_483_646;
/** Default storage quota of a workspace: 10 GiB (configurable per API and per workspace). */
export const DEFAULT_QUOTA_BYTES = 10 * 1024 ** 3;

/** How files keep their bytes (`createPmapi({ files })`). */
export interface FileOptions {
  /**
   * Where bytes live: `createDirectoryBlobStore(dir)` or
   * `createMemoryBlobStore()` from @pmapi/core, or `createS3BlobStore(…)` from
   * @pmapi/blob-s3. Without one, the file operations that move bytes answer
   * 503 `service_unavailable`; metadata still reads.
   */
  store?: BlobStore;
  /**
   * Origin where clients reach `api.handle` (`https://pm.example.com`): the
   * start of the upload and download links pmapi signs itself. Default
   * empty: links are path-absolute (`/api/v3/blobs/…`).
   */
  publicUrl?: string;
  /** How long a download link (`url`, `download`, `thumbnail`) works, in seconds (default 3600). */
  downloadTtlSeconds?: number;
  /**
   * Largest upload through pmapi's own links (stores without presigned
   * uploads), in bytes (default 64 MiB, http-node's default `uploadLimit`):
   * a larger size is refused when the upload URL is asked for.
   */
  maxUploadBytes?: number;
  /** How long an upload URL works, in seconds (default 900). */
  uploadTtlSeconds?: number;
  /** How long an uploadKey may be registered with POST /files after the upload URL was made, in seconds (default 86,400). */
  uploadKeyTtlSeconds?: number;
  /** Storage quota of a workspace in bytes (default 10 GiB); `api.admin.setWorkspaceSettings` overrides it per workspace. */
  quotaBytes?: number;
  /** Fetches upload-from-URL targets: `createUrlFetcher()` of @pmapi/webhooks (SSRF-safe). Without one that operation answers 503. */
  fetcher?: UrlFetcher;
  /** Largest upload-from-URL body in bytes (default 64 MiB: it is held in memory while stored) and its deadline (default 30 s). */
  fromUrlMaxBytes?: number;
  fromUrlTimeoutMs?: number;
  /** Makes thumbnails in post-processing: `createSharpThumbnailer()` of @pmapi/thumbnails. Without one, files are processed without thumbnails. */
  thumbnailer?: Thumbnailer;
}

/** The resolved file services every request context carries. */
export interface FileServices {
  readonly store: BlobStore | undefined;
  readonly fetcher: UrlFetcher | undefined;
  readonly thumbnailer: Thumbnailer | undefined;
  readonly quotaBytes: number;
  /** Largest upload through pmapi's own links (undefined: the store takes uploads itself). */
  readonly maxUploadBytes: number | undefined;
  readonly uploadTtlSeconds: number;
  readonly uploadKeyTtlSeconds: number;
  readonly fromUrlMaxBytes: number;
  readonly fromUrlTimeoutMs: number;
  /** Path prefix `api.handle` serves signed blob links under (`/api/v3/blobs`). */
  readonly mount: string;
  /** Key of the signed blob links. */
  readonly secret: Uint8Array;
  /** The store, or 503 when none is configured. */
  requireStore(): BlobStore;
  /**
   * A download link of a blob valid for at least the download TTL from `nowMs`
   * (expiries are aligned to TTL boundaries, so one file's links stay the
   * same for a while and can be cached).
   */
  downloadLink(key: string, fileName: string, disposition: Disposition, nowMs: number): string;
  /** Where the client PUTs exactly `size` bytes: the store's presigned URL, or pmapi's own signed link. */
  uploadLink(key: string, size: number, nowMs: number): Promise<{ url: string; expiresAt: number }>;
  /**
   * The same services for a request that came through a mount prefix (`/pm`): pmapi's own links, when
   * path-absolute (no `publicUrl`), start with it. With `publicUrl` (already the mount's public URL) unchanged.
   */
  under(mount: string): FileServices;
}

export function fileServices(o: FileOptions, secretSeed: Uint8Array, basePath: string, prefix = ''): FileServices {
  const secret = createHmac('sha256', secretSeed).update('pmapi blob links').digest();
  const mount = `${basePath}/blobs`;
  const base = `${(o.publicUrl ?? prefix).replace(/\/+$/, '')}${mount}`;
  /** The views for mount prefixes requests came through (a host has one or two). */
  const views = new Map<string, FileServices>();
  const downloadTtl = o.downloadTtlSeconds ?? 3600;
  const uploadTtl = o.uploadTtlSeconds ?? 900;
  return {
    store: o.store,
    fetcher: o.fetcher,
    thumbnailer: o.thumbnailer,
    quotaBytes: o.quotaBytes ?? DEFAULT_QUOTA_BYTES,
    maxUploadBytes: o.store?.presignUpload ? undefined : o.maxUploadBytes ?? 64 * 1024 * 1024,
    uploadTtlSeconds: uploadTtl,
    uploadKeyTtlSeconds: o.uploadKeyTtlSeconds ?? 86_400,
    fromUrlMaxBytes: o.fromUrlMaxBytes ?? 64 * 1024 * 1024,
    fromUrlTimeoutMs: o.fromUrlTimeoutMs ?? 30_000,
    mount,
    secret,
    under(p) {
      if (o.publicUrl !== undefined || p === prefix) return this;
      let view = views.get(p);
      if (!view) views.set(p, (view = fileServices(o, secretSeed, basePath, p)));
      return view;
    },
    requireStore() {
      if (!o.store) throw new ProblemError('service_unavailable', 'File storage is not configured on this server');
      return o.store;
    },
    downloadLink(key, fileName, disposition, nowMs) {
      const now = Math.floor(nowMs / 1000);
      const expiresAt = (Math.floor(now / downloadTtl) + 2) * downloadTtl;
      return signBlobLink(secret, base, { op: 'get', key, expiresAt, fileName, disposition });
    },
    async uploadLink(key, size, nowMs) {
      const store = this.requireStore();
      const expiresAt = Math.floor(nowMs / 1000) + uploadTtl;
      const url = store.presignUpload
        ? await store.presignUpload(key, { expiresInSeconds: uploadTtl, size })
        : signBlobLink(secret, base, { op: 'put', key, expiresAt, size });
      return { url, expiresAt };
    },
  };
}
