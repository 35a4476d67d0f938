// `npm run build:pglite-template` (part of `npm install`): makes the PGlite data directory that a
// first `npm start` copies instead of running initdb (some 3 s). See docs/decisions.md.
import { PGLITE_SETTINGS } from '../shared/event-store/pglite.ts';
import { buildPgliteTemplate } from '../shared/event-store/pglite-initdb.ts';

await buildPgliteTemplate(PGLITE_SETTINGS);
