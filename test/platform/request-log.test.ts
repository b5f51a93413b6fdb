import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../subgraphs/platform/config.ts';
import { loggerOptions, RequestLogController } from '../../subgraphs/platform/log.ts';

/** The JSON lines a server logs at `level` while answering one request to `url`. */
async function linesFor(level: string, url: string, status = 200) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } });
  const config = { NODE_ENV: 'production', LOG_LEVEL: level } as Config;
  const app = Fastify({ logger: { ...loggerOptions(config, 'test'), stream }, logController: new RequestLogController() });
  app.get('/users/:id', async (_request, reply) => reply.code(status).send({ ok: status < 400 }));
  await app.inject({ method: 'GET', url });
  await app.close();
  return lines.filter((line) => line.reqId);
}

describe('request log lines', () => {
  it('logs one line per request at info, when the answer is sent: request, status and time', async () => {
    const lines = await linesFor('info', '/users/u1?token=abc&keep=1', 404);
    expect(lines.map((line) => line.msg)).toEqual(['request completed']);
    const [line] = lines as [{ req: { method: string; url: string }; res: { statusCode: number }; responseTime: number; level: number }];
    expect(line.req.method).toBe('GET');
    expect(line.req.url).toBe('/users/u1?token=[redacted]&keep=1');
    expect(line.res.statusCode).toBe(404);
    expect(typeof line.responseTime).toBe('number');
    expect(line.level).toBe(30);
  });

  it('adds the arrival at debug', async () => {
    const lines = await linesFor('debug', '/users/u1');
    expect(lines.map((line) => [line.msg, line.level])).toEqual([['incoming request', 20], ['request completed', 30]]);
  });
});
