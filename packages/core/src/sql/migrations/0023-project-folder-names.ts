import type { Kysely, Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/** Longest folder name when this migration was written (resources/project-folder.resource.ts). */
const NAME_MAX = 100;

/**
 * A folder's name is unique within its portfolio (docs/not-shown.md "Project
 * folders"), now in the store too: a unique index on (portfolio_id, name),
 * compared exactly as the API's check compares them. Folders hard-delete, so
 * every stored row counts. Concurrent creates could store a name twice
 * before (issue 14): the oldest folder of each such name keeps it, the
 * others are renamed `Name (2)`, `Name (3)`, … (cut to fit 100 characters,
 * skipping names the portfolio already has). The migration writes no events.
 */
export function projectFolderNames(d: DialectSupport): Migration {
  return {
    async up(db) {
      await renameDuplicateFolders(db, d, Date.now());
      await db.schema.createIndex('project_folders_portfolio_name').unique().on('project_folders').columns(['portfolio_id', 'name']).execute();
    },
  };
}

/** Give every folder whose name another, older folder of its portfolio holds a free name; returns how many were renamed. */
export async function renameDuplicateFolders(db: Kysely<any>, d: DialectSupport, now: number): Promise<number> {
  const clashes = await db.selectFrom('project_folders').select('portfolio_id').groupBy(['portfolio_id', 'name']).having((eb) => eb.fn.countAll(), '>', 1).execute();
  const portfolios = [...new Set(clashes.map((c) => c.portfolio_id as string))];
  let renamed = 0;
  for (const portfolioId of portfolios) {
    const rows = await db.selectFrom('project_folders').select(['id', 'name']).where('portfolio_id', '=', portfolioId).orderBy('created_at').orderBy('id').execute();
    const taken = new Set(rows.map((r) => r.name as string));
    const kept = new Set<string>();
    for (const row of rows) {
      const name = row.name as string;
      if (!kept.has(name)) {
        kept.add(name);
        continue;
      }
      let k = 2;
      let next: string;
      do {
        const suffix = ` (${k++})`;
        next = `${name.slice(0, NAME_MAX - suffix.length).trimEnd()}${suffix}`;
      } while (taken.has(next));
      taken.add(next);
      kept.add(next);
      await db.updateTable('project_folders').set({ name: next, updated_at: d.encode('timestamp', now) }).where('id', '=', row.id).execute();
      renamed++;
    }
  }
  return renamed;
}
