import { runConformance } from '@pmapi/conformance';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

runConformance({ name: 'sqlite', open: (o) => openSqliteStore({ onQuery: o?.onQuery }) });
