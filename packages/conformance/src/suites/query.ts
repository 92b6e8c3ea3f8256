import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../kit';

export function querySuite(factory: StoreFactory): void {
  describe(`[${factory.name}] placeholder query`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());
    it('runs', () => {
      expect(h.a.id).toBeTypeOf('string');
    });
  });
}
