import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';

/**
 * The baseline of `npm run bench -- assets`: a bare node:http handler that
 * streams a POST body to a temp file while hashing it, fsyncs, renames it to
 * its sha256 and answers the hash. What any upload must do, with nothing else
 * (no router, token, database, probe). argv[2] is the folder to write into.
 * A GET streams the file named by `?file=`: the baseline of range reads.
 */
const dir = process.argv[2]!;

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    // The read baseline: a file named by ?file= streamed as it is (bench only).
    const file = new URL(req.url ?? '/', 'http://x').searchParams.get('file') ?? '';
    const stream = createReadStream(file, { highWaterMark: 1024 * 1024 });
    stream.once('open', () => res.writeHead(200, { 'Content-Type': 'application/octet-stream' }));
    stream.once('error', () => res.writeHead(404).end());
    stream.pipe(res);
    return;
  }
  void (async () => {
    const tmp = join(dir, `.tmp-${randomUUID()}`);
    const handle = await open(tmp, 'wx', 0o600);
    const hash = createHash('sha256');
    const out = createWriteStream('', { fd: handle.fd, autoClose: false, highWaterMark: 1024 * 1024 });
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      if (!out.write(chunk)) {
        req.pause();
        out.once('drain', () => req.resume());
      }
    });
    await new Promise<void>((resolve, reject) => {
      req.once('end', () => out.end(resolve));
      req.once('error', reject);
    });
    await handle.sync();
    await handle.close();
    const sha256 = hash.digest('hex');
    await rename(tmp, join(dir, sha256));
    res.writeHead(201, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ sha256 }));
  })().catch((err) => {
    res.writeHead(500);
    res.end(String(err));
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  process.stdout.write(`bare upload listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
