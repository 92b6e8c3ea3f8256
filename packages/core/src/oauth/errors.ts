/**
 * An RFC 6749 error (§4.1.2.1 on the authorization redirect, §5.2 at the
 * token endpoint): `{ error, error_description }`, never RFC 7807.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
    readonly extras: Record<string, unknown> = {},
  ) {
    super(`${error}: ${description}`);
  }
}
