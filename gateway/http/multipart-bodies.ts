import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { badInput } from '../../subgraphs/platform/errors.ts';

/** The largest file an area's multipart body may carry (its multipartFileBytes); 0 when none takes one. */
export const MULTIPART_FILE_BYTES =
  Math.max(0, ...Object.values(subgraphDefinitions).map((d) => d.multipartFileBytes ?? 0));

type Fields = Record<string, unknown>;

/** Adds a value under its name; a repeated name collects a list. */
function add(body: Fields, name: string, value: unknown) {
  const existing = body[name];
  body[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
}

/**
 * A multipart body as fields (strings) and the file part as `{ filename, mimetype, base64 }`. The
 * plugin's own limits answer 413; anything else busboy refuses (no `boundary=`, a body that ends
 * before its closing boundary) is the sender's malformed body: 400, not a 500.
 */
async function multipartBody(request: FastifyRequest): Promise<Fields> {
  const body: Fields = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const base64 = (await part.toBuffer()).toString('base64');
        add(body, part.fieldname, { filename: part.filename, mimetype: part.mimetype, base64 });
      } else add(body, part.fieldname, part.value);
    }
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode) throw error;
    request.log.debug({ err: { message: (error as Error).message } }, 'malformed multipart body');
    throw badInput(`Malformed multipart/form-data body: ${(error as Error).message}`);
  }
  return body;
}

/**
 * Parses multipart/form-data bodies for the routes added after it on `app`: fields become strings,
 * the file part `{ filename, mimetype, base64 }`; a file over `fileBytes` is 413.
 */
export async function registerMultipartBodies(app: FastifyInstance, fileBytes: number) {
  await app.register(multipart, { limits: { fileSize: fileBytes, files: 1, fields: 20, fieldSize: 4096 } });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) request.body = await multipartBody(request);
  });
}
