/*
 * Image thumbnails for pmapi files (issue 12), made with sharp. Implements
 * the `Thumbnailer` port of @pmapi/core.
 */
import sharp from 'sharp';
import type { Thumbnailer } from '@pmapi/core';

export interface SharpThumbnailerOptions {
  /** Largest width of a thumbnail, px (default 256). */
  width?: number;
  /** Largest height of a thumbnail, px (default 256). */
  height?: number;
  /**
   * Largest input an image may have, in pixels (width × height, default
   * 40 000 000): larger images are not decoded (decompression bombs).
   */
  maxInputPixels?: number;
}

export const DEFAULT_THUMBNAIL_WIDTH = 256;
export const DEFAULT_THUMBNAIL_HEIGHT = 256;
export const DEFAULT_MAX_INPUT_PIXELS = 40_000_000;

/** The formats (as sharp's metadata names them) thumbnails are made of. SVG is not one: untrusted SVG is never rendered. */
const RASTER_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'heif', 'avif', 'tiff']);

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

/**
 * Do the bytes begin like a raster image sharp reads (PNG, JPEG, GIF, WebP,
 * TIFF, HEIF/AVIF)? Anything else — SVG and other XML or text, gzip (svgz),
 * random bytes — never reaches a decoder.
 */
function looksLikeRaster(b: Uint8Array): boolean {
  return (
    startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) || // PNG
    startsWith(b, [0xff, 0xd8, 0xff]) || // JPEG
    startsWith(b, ascii('GIF87a')) ||
    startsWith(b, ascii('GIF89a')) ||
    (startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WEBP'), 8)) ||
    startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || // TIFF, little-endian
    startsWith(b, [0x4d, 0x4d, 0x00, 0x2a]) || // TIFF, big-endian
    startsWith(b, [0x49, 0x49, 0x2b, 0x00]) || // BigTIFF, little-endian
    startsWith(b, [0x4d, 0x4d, 0x00, 0x2b]) || // BigTIFF, big-endian
    startsWith(b, ascii('ftyp'), 4) // HEIF / AVIF (ISO base media file)
  );
}

/**
 * The thumbnailer of pmapi files: a preview of at most `width`×`height`
 * (aspect kept, never enlarged, EXIF orientation applied, metadata stripped),
 * PNG when the image has an alpha channel and JPEG (quality 80) otherwise.
 * Undefined for anything that is not a raster image sharp reads (SVG is
 * refused on purpose), for damaged images and for images above
 * `maxInputPixels`. Animated images give their first frame.
 *
 * @example
 * const thumbnailer = createSharpThumbnailer();
 * const t = await thumbnailer.thumbnail(bytes, 'photo.jpg');
 * // t: { bytes: Uint8Array(…), extension: 'jpg' } or undefined
 */
export function createSharpThumbnailer(o: SharpThumbnailerOptions = {}): Thumbnailer {
  const width = o.width ?? DEFAULT_THUMBNAIL_WIDTH;
  const height = o.height ?? DEFAULT_THUMBNAIL_HEIGHT;
  const maxInputPixels = o.maxInputPixels ?? DEFAULT_MAX_INPUT_PIXELS;
  const input = { limitInputPixels: maxInputPixels, failOn: 'error' as const };

  return {
    // The file name is only a hint; the bytes decide.
    async thumbnail(bytes: Uint8Array, _fileName: string) {
      if (!looksLikeRaster(bytes)) return undefined;
      let meta: sharp.Metadata;
      try {
        meta = await sharp(bytes, input).metadata();
      } catch {
        return undefined; // not an image sharp reads
      }
      if (!meta.format || !RASTER_FORMATS.has(meta.format)) return undefined;
      if (!meta.width || !meta.height || meta.width * meta.height > maxInputPixels) return undefined;
      const alpha = meta.hasAlpha === true;
      try {
        const pipeline = sharp(bytes, input)
          .rotate()
          .resize(width, height, { fit: 'inside', withoutEnlargement: true });
        const out = alpha ? await pipeline.png().toBuffer() : await pipeline.jpeg({ quality: 80 }).toBuffer();
        return { bytes: new Uint8Array(out.buffer, out.byteOffset, out.byteLength), extension: alpha ? 'png' : 'jpg' };
      } catch {
        return undefined; // damaged beyond its header, or over the pixel limit
      }
    },
  };
}
