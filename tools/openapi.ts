import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createService } from '../service/app';

/**
 * Writes docs/openapi.json from the running code's route table (the same
 * document the service serves at /api/v1/openapi.json). `npm run docs`.
 */
export async function renderOpenApi(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'backlot-docs-'));
  const service = createService({ dataDir: dir });
  try {
    return `${JSON.stringify(service.openapi, null, 2)}\n`;
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  void renderOpenApi().then((text) => {
    const out = resolve(__dirname, '..', '..', 'docs', 'openapi.json');
    writeFileSync(out, text);
    process.stdout.write(`wrote ${out}\n`);
  });
}
