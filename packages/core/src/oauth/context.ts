import type { SqlStore } from '../sql/dialect';
import type { Clock } from '../clock/index';
import type { Registry } from '../resources/registry';
import type { HttpRequest } from '../http/types';
import type { RateLimitStore } from '../limits/rules';
import type { GrantDeps } from './grants/shared';
import type { ConsentView } from './authorize';

/** What every endpoint of the authorization server works with. */
export interface OAuthContext {
  issuer: string;
  store: SqlStore;
  clock: Clock;
  registry: Registry;
  grants: GrantDeps;
  /** HMAC key of consent CSRF tokens. */
  key: Uint8Array;
  loopbackAnyPort: boolean;
  currentMember: (req: HttpRequest) => Promise<string | null | undefined>;
  signInUrl: (returnTo: string) => string;
  renderConsent?: (view: ConsentView) => string;
  tokenLimit?: RateLimitStore;
  clientIp: (req: HttpRequest) => string | undefined;
}
