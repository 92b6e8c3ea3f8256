/*
 * The ports of file storage (issue 12): where bytes live, how a file is
 * fetched from a URL, and how a thumbnail is made. Core holds only these
 * interfaces and the local store; the S3-compatible store
 * (@pmapi/blob-s3), the SSRF-safe fetcher (@pmapi/webhooks) and the sharp
 * thumbnailer (@pmapi/thumbnails) implement them in their own packages.
 */

/** How a download link presents the bytes: shown in the browser, or saved under the file's name. */
export type Disposition = 'inline' | 'attachment';

/**
 * Byte storage behind files. Keys are opaque strings made by pmapi
 * (`{teamId}/{uuid}`: letters, digits, `/`, `-`, `_`). A store either hands
 * out its own presigned URLs (S3-compatible stores) or leaves the upload and
 * download links to pmapi, which signs them itself and serves the bytes
 * through `api.handle` (the local store).
 */
export interface BlobStore {
  /** A short name for logs and errors (`local`, `s3`). */
  readonly kind: string;
  /**
   * A presigned URL the client PUTs exactly `size` bytes to, valid for
   * `expiresInSeconds`. Absent: pmapi signs its own upload link and stores the
   * bytes with `put`.
   */
  presignUpload?(key: string, o: { expiresInSeconds: number; size: number }): Promise<string>;
  /**
   * A presigned GET URL of the bytes valid for `expiresInSeconds`, answering
   * `Content-Type` with `contentType` (whatever the uploader sent) and
   * `Content-Disposition` with `disposition` and `fileName`. Absent: pmapi
   * serves the bytes itself from `get`.
   */
  presignDownload?(key: string, o: { expiresInSeconds: number; fileName: string; disposition: Disposition; contentType: string }): Promise<string>;
  /** Store bytes under a key (replacing any). */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes under a key, or undefined when there are none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** The size in bytes of what is stored under a key, or undefined when nothing is. */
  size(key: string): Promise<number | undefined>;
  /** Remove a key; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}

/** Why fetching a URL failed; every failure of a {@link UrlFetcher} is one of these. */
export type UrlFetchFailure =
  /** Not an http(s) URL, or its host is (or resolves to) a private, loopback or link-local address. */
  | 'refused_target'
  /** The body is longer than `maxBytes` (by Content-Length or while reading). */
  | 'too_large'
  /** No complete answer within `timeoutMs`. */
  | 'timeout'
  /** The target answered a non-2xx status (redirects are not followed). */
  | 'bad_status'
  /** DNS, connection or TLS failure. */
  | 'network';

export class UrlFetchError extends Error {
  constructor(readonly reason: UrlFetchFailure, message: string) {
    super(message);
    this.name = 'UrlFetchError';
  }
}

/** Fetches a public URL's bytes for upload-from-URL, never reaching a private address. */
export interface UrlFetcher {
  /** GET the URL; throws {@link UrlFetchError} on any failure. */
  fetch(url: string, o: { maxBytes: number; timeoutMs: number }): Promise<{ bytes: Uint8Array; contentType?: string }>;
}

/** Makes a preview image of a file's bytes. */
export interface Thumbnailer {
  /**
   * A thumbnail of the bytes, or undefined when the file is not an image this
   * thumbnailer reads (the name's extension is a hint, the bytes decide).
   */
  thumbnail(bytes: Uint8Array, fileName: string): Promise<{ bytes: Uint8Array; extension: string } | undefined>;
}
