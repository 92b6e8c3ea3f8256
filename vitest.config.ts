import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@pmapi\/core\/sql$/, replacement: src('./packages/core/src/sql/index.ts') },
      { find: /^@pmapi\/core$/, replacement: src('./packages/core/src/index.ts') },
      { find: /^@pmapi\/adapter-sqlite$/, replacement: src('./packages/adapter-sqlite/src/index.ts') },
      { find: /^@pmapi\/adapter-postgres$/, replacement: src('./packages/adapter-postgres/src/index.ts') },
      { find: /^@pmapi\/http-node\/fetch$/, replacement: src('./packages/http-node/src/fetch.ts') },
      { find: /^@pmapi\/http-node$/, replacement: src('./packages/http-node/src/index.ts') },
      { find: /^@pmapi\/webhooks$/, replacement: src('./packages/webhooks/src/index.ts') },
      { find: /^@pmapi\/blob-s3$/, replacement: src('./packages/blob-s3/src/index.ts') },
      { find: /^@pmapi\/thumbnails$/, replacement: src('./packages/thumbnails/src/index.ts') },
      { find: /^@pmapi\/testing$/, replacement: src('./packages/testing/src/index.ts') },
      { find: /^@pmapi\/conformance$/, replacement: src('./packages/conformance/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['./test/build-global-setup.ts', './test/pg-global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
