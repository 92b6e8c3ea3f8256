import type { Registry } from '../resources/registry';
import { supportedScopes } from './scopes';

/** The paths of the server, relative to the issuer. */
export const AUTHORIZE_PATH = '/oauth/authorize';
export const TOKEN_PATH = '/oauth/token';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * The RFC 8414 §2 discovery document. Authoritative for grant types, scopes,
 * PKCE methods and client-authentication methods; no registration endpoint
 * (spec "OAuth client"); RFC 9207 §3 issuer parameter supported.
 */
export function metadata(issuer: string, registry: Registry): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}${AUTHORIZE_PATH}`,
    token_endpoint: `${issuer}${TOKEN_PATH}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    scopes_supported: supportedScopes(registry),
    authorization_response_iss_parameter_supported: true,
  };
}
