import type { Kysely, Migration } from 'kysely';

/** The name `api.admin.issueToken` gives a token issued without one (docs/not-shown.md "Contract and harness (issue 17)"). */
export const DEFAULT_TOKEN_NAME = 'API token';

/**
 * Personal access tokens issued by `api.admin.issueToken` without a name,
 * before it gave them one, are named `API token`, so every token has the
 * required, non-null name its declaration (and the OpenAPI document) states.
 * OAuth access tokens (kind 'oauth') share the table and keep no name.
 * Returns how many tokens it named; a second run names none.
 */
export async function nameUnnamedTokens(db: Kysely<any>): Promise<number> {
  const r = await db.updateTable('access_tokens').set({ name: DEFAULT_TOKEN_NAME }).where('kind', '=', 'pat').where('name', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export function unnamedTokens(): Migration {
  return {
    async up(db) {
      await nameUnnamedTokens(db);
    },
  };
}
