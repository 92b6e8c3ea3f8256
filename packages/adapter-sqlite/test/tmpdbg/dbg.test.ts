import { it } from 'vitest';
import { harness } from '../../../conformance/src/kit';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
it('dbg', async () => {
  const h = await harness({ name: 'sqlite', open: (o) => openSqliteStore({ onQuery: o?.onQuery }) });
  const p = await h.project({ name: 'X' });
  console.log(p.createdByActorId, p);
  const r = await h.get(`/actors/${p.createdByActorId}`);
  console.log(r.status, r.body);
  const t = await h.post(`/tasks/abc/restore`, {});
  console.log(t.status, t.body);
});
