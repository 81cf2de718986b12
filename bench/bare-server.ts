import Koa from 'koa';

/**
 * The baseline for bench ratios: Koa answering fixed bytes from memory.
 * argv[2] is the response body; GET answers it, PUT reads the whole request
 * body first and then answers it. Prints one ready line like the service.
 */
const body = Buffer.from(process.argv[2] ?? '{}', 'utf8');
const app = new Koa();

app.use(async (ctx) => {
  if (ctx.method === 'PUT') {
    for await (const chunk of ctx.req) void chunk;
  } else if (ctx.method !== 'GET') {
    ctx.throw(405);
  }
  ctx.type = 'application/json';
  ctx.body = body;
});

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('bare server has no TCP address');
  process.stdout.write(`bare listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
