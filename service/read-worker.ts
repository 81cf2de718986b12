import { openReadOnly } from './db/open';
import { serveReads } from './db/read-pool';
import { readOps } from './read-ops';

/** The entry of a read worker thread (service/db/read-pool.ts): a read-only connection and every domain's read operations. */
serveReads(openReadOnly, (db) => readOps(db));
