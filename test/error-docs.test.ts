import { describe, it, expect } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errorCodes, errorReference, errorReferenceMarkdown, errorIndexMarkdown, versioningMarkdown, type ErrorCode } from '@pmapi/core';

// Issue 17: "a real reference entry for every code". docs/errors/{code}.md (and the index, and
// docs/versioning.md) are generated from packages/core/src/errors/reference.ts, the same text the API serves
// at {basePath}/errors/{code}. Regenerate after changing the table:
//   PMAPI_WRITE_DOCS=1 PMAPI_SKIP_BUILD=1 npx vitest run test/error-docs.test.ts

const docs = fileURLToPath(new URL('../docs/', import.meta.url));
const errorsDir = `${docs}errors/`;
const codes = Object.keys(errorCodes) as ErrorCode[];

/** Spec "Errors", the code table's "(extra fields)": each must be documented in its entry. */
const SPEC_EXTRA_FIELDS: Partial<Record<ErrorCode, string[]>> = {
  sort_field_invalid: ['field', 'resource'],
  search_query_invalid: ['reason'],
  expand_too_deep: ['max', 'depth', 'path'],
  expand_unknown_relation: ['available'],
  expand_budget_exceeded: ['relation', 'budget'],
  invalid_query_param: ['name', 'allowed'],
  batch_too_large: ['max', 'received'],
  permission_denied: ['missingPermissions'],
  m2m_target_not_found: ['missing'],
  rate_limited: ['retryAfter'],
  validation_failed: ['errors'],
};

if (process.env.PMAPI_WRITE_DOCS) {
  mkdirSync(errorsDir, { recursive: true });
  for (const c of codes) writeFileSync(`${errorsDir}${c}.md`, errorReferenceMarkdown(c));
  writeFileSync(`${errorsDir}README.md`, errorIndexMarkdown());
  writeFileSync(`${docs}versioning.md`, versioningMarkdown());
}

describe('error reference (docs/errors)', () => {
  it('every code has its entry, equal to what the API serves', () => {
    for (const c of codes) {
      const file = `${errorsDir}${c}.md`;
      expect(existsSync(file), `docs/errors/${c}.md is missing (regenerate: PMAPI_WRITE_DOCS=1)`).toBe(true);
      expect(readFileSync(file, 'utf8'), `docs/errors/${c}.md is stale (regenerate: PMAPI_WRITE_DOCS=1)`).toBe(errorReferenceMarkdown(c));
    }
    expect(readFileSync(`${errorsDir}README.md`, 'utf8')).toBe(errorIndexMarkdown());
    expect(readFileSync(`${docs}versioning.md`, 'utf8')).toBe(versioningMarkdown());
  });

  it('every entry names a code (no stray files), and the index lists each code once', () => {
    const stray = readdirSync(errorsDir).filter((f) => f !== 'README.md' && !(f.endsWith('.md') && Object.prototype.hasOwnProperty.call(errorCodes, f.slice(0, -3))));
    expect(stray).toEqual([]);
    const index = readFileSync(`${errorsDir}README.md`, 'utf8');
    for (const c of codes) expect(index.split(`](${c}.md)`).length - 1, c).toBe(1);
    expect(Object.keys(errorReference).sort()).toEqual([...codes].sort());
  });

  it('each entry says what it means and what to do, states its status, and documents the spec\'s extra fields', () => {
    for (const c of codes) {
      const ref = errorReference[c];
      expect(ref.meaning.length, c).toBeGreaterThan(10);
      expect(ref.action.length, c).toBeGreaterThan(10);
      expect(errorReferenceMarkdown(c)).toContain(`HTTP ${errorCodes[c].status} · ${errorCodes[c].title}`);
      for (const f of SPEC_EXTRA_FIELDS[c] ?? []) expect(Object.keys(ref.fields ?? {}), `${c}.${f}`).toContain(f);
    }
  });
});
