import { ProblemError } from '../errors/problem';
import type { ReadContext } from '../services/context';
import { Repo } from '../sql/repo';
import { ProjectAccess } from '../services/access';

/** How long a search may run before it answers search_timed_out (spec "Errors"), ms; `searchTimeoutMs` overrides it. */
export const SEARCH_TIMEOUT_MS = 5000;

/**
 * Run a search's statements under a deadline of `ms` (spec "Errors":
 * search_timed_out, "search took too long"). Where the store can cancel a
 * statement server-side (`DialectSupport.withStatementTimeout`: Postgres's
 * statement_timeout) each statement is cancelled at the deadline; on every
 * store the elapsed time, read from the injected clock, is checked between
 * statements (`check`), so a search never goes on past it. Either way the
 * answer is 400 search_timed_out with `timeoutMs`.
 */
export async function withSearchDeadline<T>(ctx: ReadContext, ms: number, fn: (ctx: ReadContext, check: () => void) => Promise<T>): Promise<T> {
  const start = ctx.clock.now();
  const timedOut = () => new ProblemError('search_timed_out', `The search took longer than ${ms} ms; narrow it with filters or a more specific q`, { timeoutMs: ms });
  const check = () => {
    if (ctx.clock.now() - start > ms) throw timedOut();
  };
  const dialect = ctx.repo.dialect;
  try {
    if (dialect.withStatementTimeout) {
      return await dialect.withStatementTimeout(ctx.repo.db, ms, (db) => fn(boundTo(ctx, new Repo(db, dialect)), check));
    }
    return await fn(ctx, check);
  } catch (err) {
    if (dialect.isStatementTimeout?.(err)) throw timedOut();
    throw err;
  }
}

/**
 * The context of a search inside its timed transaction: the repo AND the
 * access checks (filterOpen, canOpen: reads of project membership while
 * expanding) run on that transaction's connection. An access object still on
 * the outer repo would borrow a second pooled connection while the first sits
 * idle in the transaction: with concurrent searches the pool runs dry and
 * every search waits on the others.
 */
function boundTo(ctx: ReadContext, repo: Repo): ReadContext {
  const inner = { ...ctx, repo } as Omit<ReadContext, 'access'> & { access: ProjectAccess };
  inner.access = new ProjectAccess(inner as ReadContext);
  return inner as ReadContext;
}
