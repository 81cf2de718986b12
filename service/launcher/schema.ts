import { z } from 'zod';
import { pageQuery } from '../core/pagination';
import { CAPABILITIES } from '../core/auth';
import { STUDIO_ID_PATTERN } from '../core/origin';
import { STUDIO_STATES } from './store';
import { ASSET_KINDS } from '../assets';

/** The launcher's request and response bodies (docs/api.md "Launcher"). */

const source = z.string().min(1).max(4096).meta({ description: 'An absolute path to the studio folder (it holds backlot.json).' });

export const sourceBody = z.strictObject({ source });
export const updateBody = z.strictObject({
  source,
  approve: z.boolean().optional().meta({ description: 'Grants the capabilities that the new version adds (after a 409 `approval_required`).' }),
});
export const uninstallBody = z.strictObject({
  confirm: z.boolean().optional().meta({ description: 'Must be true; without it the answer is 409 `confirm_required`.' }),
  purge: z.boolean().optional().meta({ description: "Also delete the studio's data: documents, records, sessions, gallery items, sequences, its folders and its files' grants." }),
});

export const studioParams = z.object({ id: z.string().regex(STUDIO_ID_PATTERN) });
export const jobParams = z.object({ id: z.string() });
export const studioListQuery = z.object(pageQuery);
export const jobListQuery = z.object({
  ...pageQuery,
  studio: z.string().regex(STUDIO_ID_PATTERN).optional().meta({ description: "Only this studio's jobs." }),
});

export const studio = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string(),
    description: z.string().nullable(),
    state: z.enum(STUDIO_STATES),
    heavy: z.boolean(),
    port: z.number().int().nullable().meta({ description: "The studio server's own port while it is starting or running." }),
    origin: z.string().meta({ description: 'http://<id>.localhost:PORT, where its pages are served.' }),
    capabilities: z.array(z.enum(CAPABILITIES)),
    accepts: z
      .object({ kinds: z.array(z.enum(ASSET_KINDS)), path: z.string() })
      .nullable()
      .meta({ description: "What it takes from other studios (the manifest's `accepts`, `path` defaulted to /); null: it receives no handoffs." }),
    linked: z.boolean().meta({ description: 'Installed by reference (`:link`): the app folder is the source folder.' }),
    source: z.string(),
    installed: z.boolean().meta({ description: 'Install, build and download all succeeded once (false after a failed first install).' }),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Studio' });
export const studioPage = z.object({ items: z.array(studio), next_cursor: z.string().nullable() });

export const example = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string(),
    description: z.string().nullable(),
    needs: z.array(z.string()).meta({ description: 'What it needs beyond Backlot itself, in words (the manifest\'s `needs`), e.g. "ffmpeg".' }),
    heavy: z.boolean(),
    capabilities: z.array(z.enum(CAPABILITIES)),
    source: z.string().meta({ description: 'The absolute folder it ships in: the `source` to install it from.' }),
    installed: z.boolean().meta({ description: 'A studio with its id is installed (in any state).' }),
  })
  .meta({ id: 'Example' });
export const exampleList = z.object({ items: z.array(example) });
