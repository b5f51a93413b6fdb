import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TOKEN_LIFETIME_SECONDS, type Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { MAX_FILE_BYTES } from '../../subgraphs/roadside/services/files.ts';
import { grantClientCredentials, sendTokenError, TokenError, type TokenDeps } from './token-route.ts';

export const ROADSIDE_TOKEN_PATH = '/services/roadside/v1/oauth/accesstoken';

/** The roadside token: the `roadside` scope unless the client asks for others; a client without it is refused. */
function roadsideScopes(granted: Scope[]): Scope[] {
  if (!granted.includes('roadside')) throw new TokenError('invalid_scope', 'this client may not use the roadside services');
  return ['roadside'];
}

/**
 * The roadside token endpoint (`POST /oauth/accesstoken?grant_type=client_credentials`, client
 * authenticated with HTTP Basic) answering in the roadside response shape, and multipart parsing
 * for the provider file upload (`multipart/form-data`: fields become strings, the file part
 * `{ filename, mimetype, base64 }`; parts over the file size limit are 413).
 */
export async function registerRoadsideRoutes(app: FastifyInstance, deps: TokenDeps) {
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 20, fieldSize: 4096 },
    async onFile(part) {
      const data = await part.toBuffer();
      (part as unknown as { value: unknown }).value = { filename: part.filename, mimetype: part.mimetype, base64: data.toString('base64') };
    },
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
