import { describe, it, expect } from 'vitest';
import { createPmapi } from '@pmapi/core';

/** Issue 16 "Operable" for the OAuth options (issue 17 adds the host hooks): each bad key or value is named. */
describe('createPmapi oauth options validation', () => {
  const fakeStore = { db: {}, dialect: {}, close: async () => undefined } as any;
  const good = { issuer: 'https://auth.example.com', currentMember: () => null, signInUrl: () => '/login' };

  it('a typo in an OAuth option is refused naming it (renderconsent, consentHeaders)', async () => {
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, renderconsent: () => '' } } as any)).rejects.toThrow(/^pmapi: options\.oauth\.renderconsent is not an option$/);
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, consentHeaders: {} } } as any)).rejects.toThrow(/options\.oauth\.consentHeaders is not an option/);
  });

  it('hooks must be functions; issuer a string; loopbackAnyPort a boolean; tokenRateLimit a store or false', async () => {
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, renderConsent: '<html>' } } as any)).rejects.toThrow(/^pmapi: options\.oauth\.renderConsent must be a function \(view, host\) =>/);
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, currentMember: 'session' } } as any)).rejects.toThrow(/options\.oauth\.currentMember must be a function/);
    await expect(createPmapi({ store: fakeStore, oauth: { issuer: good.issuer, currentMember: good.currentMember } } as any)).rejects.toThrow(/options\.oauth\.signInUrl must be a function/);
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, issuer: 5 } } as any)).rejects.toThrow(/options\.oauth\.issuer must be the issuer URL/);
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, loopbackAnyPort: 'yes' } } as any)).rejects.toThrow(/options\.oauth\.loopbackAnyPort must be true or false/);
    await expect(createPmapi({ store: fakeStore, oauth: { ...good, tokenRateLimit: true } } as any)).rejects.toThrow(/options\.oauth\.tokenRateLimit must be a RateLimitStore or false/);
    await expect(createPmapi({ store: fakeStore, oauth: 'on' } as any)).rejects.toThrow(/options\.oauth must be an object: OAuthOptions/);
  });
});
