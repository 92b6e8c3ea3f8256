import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { createSharpThumbnailer } from '@pmapi/thumbnails';

const rgba = { r: 10, g: 120, b: 200, alpha: 0.5 };
const rgb = { r: 200, g: 30, b: 40 };
const image = (width: number, height: number, channels: 3 | 4) =>
  sharp({ create: { width, height, channels, background: channels === 4 ? rgba : rgb } });

const isPng = (b: Uint8Array) => Buffer.from(b.subarray(0, 8)).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
const isJpeg = (b: Uint8Array) => b[0] === 0xff && b[1] === 0xd8;

const SVG = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600" fill="red"/></svg>`;

describe('createSharpThumbnailer', () => {
  const thumbnailer = createSharpThumbnailer();

  it('an 800x600 PNG with alpha becomes a 256x192 PNG', async () => {
    const input = await image(800, 600, 4).png().toBuffer();
    const t = await thumbnailer.thumbnail(input, 'a.png');
    expect(t).toBeDefined();
    expect(t!.extension).toBe('png');
    expect(t!.bytes).toBeInstanceOf(Uint8Array);
    expect(isPng(t!.bytes)).toBe(true);
    const m = await sharp(t!.bytes).metadata();
    expect(m).toMatchObject({ format: 'png', width: 256, height: 192, hasAlpha: true });
  });

  it('an opaque JPEG becomes a JPEG (FF D8) within 256x256, aspect kept, metadata stripped', async () => {
    const input = await image(600, 1200, 3).withMetadata({ exif: { IFD0: { Copyright: 'secret owner' } } }).jpeg().toBuffer();
    expect((await sharp(input).metadata()).exif).toBeDefined();
    const t = await thumbnailer.thumbnail(input, 'b.jpg');
    expect(t?.extension).toBe('jpg');
    expect(isJpeg(t!.bytes)).toBe(true);
    const m = await sharp(t!.bytes).metadata();
    expect(m).toMatchObject({ format: 'jpeg', width: 128, height: 256 });
    expect(m.exif).toBeUndefined();
    expect(Buffer.from(t!.bytes).includes('secret owner')).toBe(false);
  });

  it('an opaque PNG (no alpha) becomes a JPEG', async () => {
    const input = await image(1000, 500, 3).png().toBuffer();
    const t = await thumbnailer.thumbnail(input, 'c.png');
    expect(t?.extension).toBe('jpg');
    expect(await sharp(t!.bytes).metadata()).toMatchObject({ format: 'jpeg', width: 256, height: 128 });
  });

  it('webp, gif, tiff and avif inputs are read too (PNG out exactly when sharp reads an alpha channel)', async () => {
    for (const [name, input] of [
      ['d.webp', await image(512, 512, 4).webp().toBuffer()],
      ['e.gif', await image(300, 150, 3).gif().toBuffer()],
      ['f.tiff', await image(400, 400, 3).tiff().toBuffer()],
      ['g.avif', await image(640, 320, 3).avif().toBuffer()],
    ] as const) {
      const alpha = (await sharp(input).metadata()).hasAlpha;
      const t = await thumbnailer.thumbnail(input, name);
      expect(t?.extension, name).toBe(alpha ? 'png' : 'jpg');
      const m = await sharp(t!.bytes).metadata();
      expect(m.format, name).toBe(alpha ? 'png' : 'jpeg');
      expect(Math.max(m.width!, m.height!), name).toBe(256);
    }
  });

  it('a small 10x10 image is not enlarged', async () => {
    const input = await image(10, 10, 4).png().toBuffer();
    const t = await thumbnailer.thumbnail(input, 'small.png');
    expect(await sharp(t!.bytes).metadata()).toMatchObject({ width: 10, height: 10 });
  });

  it('the bytes decide, not the name', async () => {
    const input = await image(800, 600, 3).jpeg().toBuffer();
    const t = await thumbnailer.thumbnail(input, 'not-an-image.txt');
    expect(t?.extension).toBe('jpg');
    expect(await thumbnailer.thumbnail(Buffer.from('hello, world\n'), 'photo.jpg')).toBeUndefined();
  });

  it('random bytes, a text file, empty bytes and a truncated image give undefined', async () => {
    expect(await thumbnailer.thumbnail(randomBytes(4096), 'x.bin')).toBeUndefined();
    expect(await thumbnailer.thumbnail(Buffer.from('just some notes\nline two\n'), 'notes.txt')).toBeUndefined();
    expect(await thumbnailer.thumbnail(new Uint8Array(0), 'empty.png')).toBeUndefined();
    const png = await image(800, 600, 4).png().toBuffer();
    expect(await thumbnailer.thumbnail(png.subarray(0, 40), 'cut.png')).toBeUndefined();
    // A valid signature followed by garbage.
    expect(await thumbnailer.thumbnail(Buffer.concat([png.subarray(0, 8), randomBytes(2000)]), 'bad.png')).toBeUndefined();
  });

  it('SVG is never rendered: plain, without XML declaration, gzipped (svgz) or named .png', async () => {
    // sharp itself would read it: the refusal is the thumbnailer's.
    expect((await sharp(Buffer.from(SVG)).metadata()).format).toBe('svg');
    expect(await thumbnailer.thumbnail(Buffer.from(SVG), 'a.svg')).toBeUndefined();
    expect(await thumbnailer.thumbnail(Buffer.from(SVG.replace(/^<\?xml[^>]*>\s*/, '')), 'a.png')).toBeUndefined();
    expect(await thumbnailer.thumbnail(Buffer.from(`  \n${SVG}`), 'a.svg')).toBeUndefined();
    expect(await thumbnailer.thumbnail(gzipSync(Buffer.from(SVG)), 'a.svgz')).toBeUndefined();
  });

  it('an image above maxInputPixels gives undefined (decompression bombs)', async () => {
    const small = createSharpThumbnailer({ maxInputPixels: 100 * 100 });
    expect(await small.thumbnail(await image(101, 100, 3).png().toBuffer(), 'big.png')).toBeUndefined();
    expect(await small.thumbnail(await image(100, 100, 3).png().toBuffer(), 'ok.png')).toBeDefined();
  });

  it('width and height options bound the thumbnail', async () => {
    const t = await createSharpThumbnailer({ width: 64, height: 32 }).thumbnail(await image(800, 600, 4).png().toBuffer(), 'a.png');
    expect(await sharp(t!.bytes).metadata()).toMatchObject({ width: 43, height: 32 });
  });
});
