/**
 * What the request pipeline asks of a rate limiter (spec "Limits"): admit a
 * request — returning the X-RateLimit-* headers to add — or throw a 429
 * `rate_limited` ProblemError with Retry-After.
 */
export interface RateLimiter {
  check(input: { tokenId: string; method: string; clientIp: string | undefined; now: number }): Promise<Record<string, string>>;
}
