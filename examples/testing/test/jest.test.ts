import { describe, it, expect } from 'vitest';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const dir = fileURLToPath(new URL('..', import.meta.url));
const jestBin = createRequire(import.meta.url).resolve('jest/bin/jest');

// Issue 17: the harness works from jest too. This runs the example's jest file (test/harness.jest.mjs) in jest's
// native ESM mode against the BUILT @pmapi/testing, as the README tells a jest user to, so CI runs it.
describe('example: testing an app with @pmapi/testing (jest)', () => {
  it('jest runs test/harness.jest.mjs and passes', async () => {
    const run = await promisify(execFile)(process.execPath, ['--experimental-vm-modules', jestBin, '--ci', '--json'], { cwd: dir, timeout: 120_000 }).catch((e) => {
      throw new Error(`jest failed:\n${e.stdout}\n${e.stderr}`);
    });
    const report = JSON.parse(run.stdout);
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBe(2);
    expect(report.testResults.map((r: { name: string }) => r.name.slice(dir.length))).toEqual(['test/harness.jest.mjs']);
  }, 150_000);
});
