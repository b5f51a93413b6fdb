import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TOKEN_LIFETIME_SECONDS, type Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { badInput } from '../../subgraphs/platform/errors.ts';
import { MAX_FILE_BYTES } from '../../subgraphs/roadside/rules.ts';
import { grantClientCredentials, sendTokenError, TokenError, type TokenDeps } from './token-route.ts';

export const ROADSIDE_TOKEN_PATH = '/services/roadside/v1/oauth/accesstoken';

/** The roadside token: the `roadside` scope unless the client asks for others; a client without it is refused. */
function roadsideScopes(granted: Scope[]): Scope[] {
  if (!granted.includes('roadside')) throw new TokenError('invalid_scope', 'this client may not use the roadside services');
  return ['roadside'];
}

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
      if (part.type === 'file') add(body, part.fieldname, { filename: part.filename, mimetype: part.mimetype, base64: (await part.toBuffer()).toString('base64') });
      else add(body, part.fieldname, part.value);
    }
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode) throw error;
    request.log.debug({ err: { message: (error as Error).message } }, 'malformed multipart body');
    throw badInput(`Malformed multipart/form-data body: ${(error as Error).message}`);
  }
  return body;
}

/**
 * The roadside token endpoint (`POST /oauth/accesstoken?grant_type=client_credentials`, client
 * authenticated with HTTP Basic) answering in the roadside response shape, and multipart parsing
 * for the provider file upload (`multipart/form-data`: fields become strings, the file part
 * `{ filename, mimetype, base64 }`; parts over the file size limit are 413).
 */
export async function registerRoadsideRoutes(app: FastifyInstance, deps: TokenDeps) {
  await app.register(multipart, { limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 20, fieldSize: 4096 } });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) request.body = await multipartBody(request);
  });

  app.post(ROADSIDE_TOKEN_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const grant = await grantClientCredentials(deps, {
        body: request.body, authorization: request.headers.authorization, ip: request.ip, url: request.url, query: request.query as Record<string, unknown>,
      }, roadsideScopes);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({
        access_token: grant.accessToken,
        token_type: 'Bearer',
        expires_in: String(TOKEN_LIFETIME_SECONDS),
        issued_at: String(Date.now()),
        scope: grant.scopes.join(' '),
        client_id: grant.clientId,
        status: 'approved',
      });
    } catch (error) {
      if (sendTokenError(error, reply, /^Basic\s/i.test(request.headers.authorization ?? ''))) return reply;
      throw error;
    }
  });
}
