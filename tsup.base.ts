import type { Options } from 'tsup';

/** The build every package shares: ESM + .d.ts for Node 20. */
export const base: Options = {
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
};
