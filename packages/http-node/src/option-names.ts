// No imports: shared by the node:http entry and the fetch entry (which must stay free of node: modules).

/** Levenshtein distance of two short strings (typo suggestions). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * Issue 16 "Operable": typos are not accepted. A front end's options object with a key it does not know
 * (`{ trustProxys: true }`, `{ corss: … }`, `{ bodyLimt: … }`) is refused naming it, with a did-you-mean,
 * instead of silently running with the default. `prefix` names the object (`toNodeHandler options`, `cors`).
 */
export function checkOptionNames(prefix: string, given: unknown, known: readonly string[]): void {
  if (given === undefined) return;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new TypeError(`pmapi http-node: ${prefix} must be an object`);
  const bad = Object.keys(given).filter((k) => !known.includes(k));
  if (bad.length === 0) return;
  throw new TypeError(
    bad
      .map((k) => {
        const near = known.find((o) => distance(o.toLowerCase(), k.toLowerCase()) <= 2);
        return `pmapi http-node: ${prefix}.${k} is not an option${near ? ` (did you mean ${prefix}.${near}?)` : ''}; known: ${known.join(', ')}`;
      })
      .join('\n'),
  );
}
