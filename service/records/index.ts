export { createRecordsStore, declareIndex, RECORDS_SQL, purgeStudioRecords } from './store';
export type { RecordsStore, DeclaredIndex } from './store';
export { recordRoutes } from './routes';
export { COLLECTION_PATTERN } from './schema';
export { recordReadOps, recordReads } from './reads';
export type { RecordReadOps, RecordReads } from './reads';
