/*
 * The local byte stores (issue 12): in memory (tests, demos) and in a
 * directory of the local disk. Neither presigns URLs: pmapi signs its own
 * upload and download links (./links) and serves the bytes itself (./serve).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { BlobStore } from './ports';

/**
 * What a blob key may look like: one to four `/`-separated segments of
 * letters, digits, `_` and `-` (1–128 characters each). No dots, so no `..`
 * and no hidden files; no leading `/`, so never an absolute path.
 */
export const BLOB_KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}(\/[A-Za-z0-9_-]{1,128}){0,3}$/;

function checkKey(key: string): void {
  if (typeof key !== 'string' || !BLOB_KEY_PATTERN.test(key)) {
    throw new Error(`Invalid blob key ${JSON.stringify(String(key).slice(0, 200))}: expected 1-4 '/'-separated segments of [A-Za-z0-9_-]`);
  }
}

/**
 * A store holding bytes in a Map, for tests and demos. Bytes are copied on
 * the way in and out: callers can never alter what is stored.
 */
export function createMemoryBlobStore(): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return {
    kind: 'memory',
    async put(key, bytes) {
      checkKey(key);
      blobs.set(key, new Uint8Array(bytes));
    },
    async get(key) {
      checkKey(key);
      const b = blobs.get(key);
      return b === undefined ? undefined : new Uint8Array(b);
    },
    async size(key) {
      checkKey(key);
      return blobs.get(key)?.byteLength;
    },
    async delete(key) {
      checkKey(key);
      blobs.delete(key);
    },
  };
}

/** An error code for "there is no file under this key" (a segment is missing, or is a file where a directory would be). */
const MISSING = new Set(['ENOENT', 'ENOTDIR']);
const codeOf = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code ?? '';

/**
 * A store keeping each blob as a file under `dir` (created, with its parents,
 * on first write): key `team/uuid` is the file `dir/team/uuid`. Keys are
 * checked against {@link BLOB_KEY_PATTERN} and the resolved path must stay
 * inside `dir`. Writes are atomic: the bytes go to a temporary file in the
 * same directory, which is then renamed over the key's file, so a reader
 * sees the old bytes or the new ones, never a part.
 *
 * @example
 * const store = createDirectoryBlobStore('/var/lib/pmapi/blobs');
 */
export function createDirectoryBlobStore(dir: string): BlobStore {
  const root = resolve(dir);
  const inside = root.endsWith(sep) ? root : root + sep;
  const pathOf = (key: string): string => {
    checkKey(key);
    const file = resolve(join(root, ...key.split('/')));
    if (!file.startsWith(inside)) throw new Error(`Invalid blob key ${JSON.stringify(key)}: outside the store's directory`);
    return file;
  };
  return {
    kind: 'local',
    async put(key, bytes) {
      const file = pathOf(key);
      const parent = dirname(file);
      await mkdir(parent, { recursive: true });
      // A leading dot: no valid key ever names a temporary file.
      const tmp = join(parent, `.${randomBytes(8).toString('hex')}.tmp`);
      try {
        await writeFile(tmp, bytes, { flag: 'wx' });
        await rename(tmp, file);
      } catch (err) {
        await unlink(tmp).catch(() => {});
        throw err;
      }
    },
    async get(key) {
      const file = pathOf(key);
      try {
        const buf = await readFile(file);
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      } catch (err) {
        // EISDIR: the key names a directory (a prefix of other keys), not a blob.
        if (MISSING.has(codeOf(err)) || codeOf(err) === 'EISDIR') return undefined;
        throw err;
      }
    },
    async size(key) {
      const file = pathOf(key);
      try {
        const s = await stat(file);
        return s.isFile() ? s.size : undefined;
      } catch (err) {
        if (MISSING.has(codeOf(err))) return undefined;
        throw err;
      }
    },
    async delete(key) {
      const file = pathOf(key);
      try {
        await unlink(file);
      } catch (err) {
        if (MISSING.has(codeOf(err)) || codeOf(err) === 'EISDIR') return;
        throw err;
      }
    },
  };
}
