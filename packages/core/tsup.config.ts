import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

export default defineConfig({ ...base, entry: { index: 'src/index.ts', 'sql/index': 'src/sql/index.ts' } });
