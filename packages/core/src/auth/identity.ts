import { ProblemError } from '../errors/problem';
import type { Principal } from '../resources/hooks';

/** The kind of identity a principal acts as: a person unless the admin API issued its credential to an agent or automation. */
export function identityOf(p: Principal): 'human' | 'agent' | 'automation' {
  return p.identity ?? 'human';
}

/**
 * Operations only a person may perform (docs/not-shown.md "Agents and
 * automations"): managing personal access tokens and managing members. An
 * agent or automation gets 400 identity_rejected (spec "Errors"), whatever
 * its role and scopes.
 */
export function requireHuman(p: Principal, operation: string): void {
  const identity = identityOf(p);
  if (identity !== 'human') {
    throw new ProblemError('identity_rejected', `An ${identity} cannot ${operation}; only a person can`, { identityType: identity, allowed: ['human'] });
  }
}
