/**
 * Runs the service of a packaged app's tree (an extracted app.asar with its
 * unpacked files) under plain Node, as the desktop app's main process would
 * boot it: `node packaged-serve.js APP_DIR DATA_DIR`. Prints `READY <url>`;
 * SIGTERM closes it. Nothing of this project's own dist/ is loaded: the
 * service and its node_modules come from APP_DIR.
 */
import { join } from 'node:path';

const [appDir, dataDir] = process.argv.slice(2) as [string, string];
const { createService } = require(join(appDir, 'dist', 'service', 'app.js')) as typeof import('../../service/app');
const service = createService({ dataDir });
service.listen(0).then(
  (address) => process.stdout.write(`READY ${address.url}\n`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
process.on('SIGTERM', () => {
  service.close().then(() => process.exit(0), () => process.exit(1));
});
