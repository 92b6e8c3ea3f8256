import { defineConfig } from 'vitest/config';

// Run on its own (`pnpm test` here), the example resolves @pmapi/* as an app would: the built packages.
export default defineConfig({ test: { include: ['test/**/*.test.ts'], testTimeout: 20_000 } });
