export { createJobsDomain, INTERRUPTED_MESSAGE } from './domain';
export type { JobContext, JobsDomain, JobsOptions, JobWork, RunHandle, RunJobSpec } from './domain';
export type { RunStep } from './runner';
export type { JobRow } from './store';
export { jobJson, JOBS_SQL, recountTaskData } from './store';
export { jobRoutes } from './routes';
export { JOB_KINDS, JOB_STATES, type JobKind, type JobState } from './states';
export { splitCommand, CommandSyntaxError } from './argv';
export { job as jobSchema, jobPage as jobPageSchema } from './schema';
