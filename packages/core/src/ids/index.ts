import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Where new identifiers and secrets come from. Injectable so tests can make
 * them predictable.
 */
export interface IdGenerator {
  /** An opaque resource id matching `^[0-9A-Za-z_!]+$`. */
  id(): string;
  /** A UUID (actor ids, event ids). */
  uuid(): string;
  /** A random base62 string of the given length (token secrets). */
  secret(length: number): string;
  /** A uniform number in [0, 1) (palette picks, jitter). */
  random(): number;
}

/** Random bytes drawn 4 KiB at a time (as randomUUID buffers its own): one system call per many ids, not one per id. */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;
function nextByte(): number {
  if (poolAt >= pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** Base62 from rejection-sampled random bytes (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = nextByte() & 63;
    if (b < 62) out += ALPHABET[b];
  }
  return out;
}

/** Cryptographically random ids: 12 base62 characters (~71 bits). */
export const randomIds: IdGenerator = {
  id: () => randomBase62(12),
  uuid: () => randomUUID(),
  secret: (n) => randomBase62(n),
  random: () => randomBytes(6).readUIntBE(0, 6) / 2 ** 48,
};

/** Predictable ids for tests: `t0000001`, `t0000002`, … */
export function sequentialIds(prefix = 't'): IdGenerator {
  let n = 0;
  let u = 0;
  return {
    id: () => `${prefix}${String(++n).padStart(8, '0')}`,
    uuid: () => `00000000-0000-4000-8000-${String(++u).padStart(12, '0')}`,
    secret: (len) => randomBase62(len),
    random: () => 0.5,
  };
}

export const ID_PATTERN = /^[0-9A-Za-z_!]+$/;
/** Longest id a path or body may name (spec: ids run 8-17 characters today; not part of the contract). */
export const ID_MAX_LENGTH = 64;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Could `s` be an id (spec "Conventions": `^[0-9A-Za-z_!]+$`, at most {@link ID_MAX_LENGTH} characters)? */
export function isId(s: string): boolean {
  return s.length <= ID_MAX_LENGTH && ID_PATTERN.test(s);
}

/** Could `s` be a UUID (actor ids)? */
export function isUuid(s: string): boolean {
  return UUID_PATTERN.test(s);
}
