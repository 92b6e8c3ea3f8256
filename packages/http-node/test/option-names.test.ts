import { describe, it, expect } from 'vitest';
import { createNodeServer, toNodeHandler } from '@pmapi/http-node';
import { toFetchHandler } from '@pmapi/http-node/fetch';

// Issue 16 "Operable": typos are not accepted. The front ends ignored keys they did not know, so
// `{ trustProxys: true }` kept trusting the socket, `{ corss: … }` left CORS off and `{ bodyLimt: 1024 }`
// kept 4 MiB, all without a word. Refused when the handler is made, naming the key.
const api = { handle: async () => ({ status: 204, headers: {} }), problem: () => ({ status: 500, headers: {} }) } as unknown as Parameters<typeof toNodeHandler>[0];

describe('http-node: an unknown option is refused naming it (issue 16)', () => {
  it('toNodeHandler, createNodeServer, toFetchHandler and cors refuse typos with a did-you-mean', () => {
    expect(() => toNodeHandler(api, { trustProxys: true } as never)).toThrow(/^pmapi http-node: toNodeHandler options\.trustProxys is not an option \(did you mean toNodeHandler options\.trustProxy\?\); known: bodyLimit, /);
    expect(() => toNodeHandler(api, { corss: { origins: ['*'] } } as never)).toThrow(/toNodeHandler options\.corss is not an option \(did you mean toNodeHandler options\.cors\?\)/);
    expect(() => toNodeHandler(api, { mount: '/pm' } as never)).toThrow(/^pmapi http-node: toNodeHandler options\.mount is not an option; known/);
    expect(() => createNodeServer(api, { bodyLimt: 1024 } as never)).toThrow(/createNodeServer options\.bodyLimt is not an option \(did you mean createNodeServer options\.bodyLimit\?\)/);
    expect(() => toFetchHandler(api, { mnt: '/pm' } as never)).toThrow(/^pmapi http-node: toFetchHandler options\.mnt is not an option \(did you mean toFetchHandler options\.mount\?\)/);
    expect(() => toFetchHandler(api, { trustProxy: true } as never)).toThrow(/toFetchHandler options\.trustProxy is not an option; known: bodyLimit, uploadLimit, clientIp, cors, mount$/);
    expect(() => toNodeHandler(api, { cors: { origins: ['*'], origin: 'x' } } as never)).toThrow(/^pmapi http-node: cors\.origin is not an option \(did you mean cors\.origins\?\)/);
    expect(() => toFetchHandler(api, { cors: { origins: ['*'], maxage: 5 } } as never)).toThrow(/cors\.maxage is not an option \(did you mean cors\.maxAge\?\)/);
    expect(() => toNodeHandler(api, 'x' as never)).toThrow(/^pmapi http-node: toNodeHandler options must be an object$/);
  });

  it('every documented option is accepted', () => {
    expect(typeof toNodeHandler(api, { bodyLimit: 1, uploadLimit: 1, bodyTimeoutMs: 1, drainTimeoutMs: 1, drainLimit: 1, trustProxy: false, basePath: '/api/v3', cors: { origins: ['*'], credentials: false, maxAge: 1 } })).toBe('function');
    const server = createNodeServer(api, { bodyLimit: 1, headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 500 });
    server.close();
    expect(typeof toFetchHandler(api, { bodyLimit: 1, uploadLimit: 1, clientIp: () => undefined, cors: { origins: ['*'] }, mount: '/pm' })).toBe('function');
  });
});
