import { describe, it, expect } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const dir = fileURLToPath(new URL('..', import.meta.url));

// Issue 17: the harness works from node:test too. This runs the example's node:test file against the BUILT
// @pmapi/testing (Node resolves it through examples/testing/node_modules and the package's exports), so CI runs both.
describe('example: testing an app with @pmapi/testing (node:test)', () => {
  it('node --test test/harness.node.mjs passes', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', 'test/harness.node.mjs'], { cwd: dir, timeout: 120_000 }).catch((e) => {
      throw new Error(`node --test failed:\n${e.stdout}\n${e.stderr}`);
    });
    expect(stdout).toMatch(/^# pass 2$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
  }, 150_000);
});
