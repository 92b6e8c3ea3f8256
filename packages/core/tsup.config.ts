import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'sql/index': 'src/sql/index.ts' },
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
