import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ORGANISATION_PATTERN, organisationName } from '../../subgraphs/platform/organisation.ts';
import { viewOf, type IssuerStore } from '../auth/issuers.ts';
import type { TrustedIssuers } from '../auth/oidc/trusted-issuers.ts';
import { adminBodyErrors, adminErrors, adminHandler, adminSecurity as security, idParam, parseInput, problem } from './admin-api.ts';

export const ADMIN_ISSUERS_PATH = '/platform/admin/v1/issuers';

const trustBody = z.object({
  issuer: z.string().min(1).max(2048),
  organisation: organisationName,
  audience: z.string().min(1).max(255),
  userClaim: z.string().min(1).max(64).optional(),
  scopesClaim: z.string().min(1).max(64).optional(),
  scopeMap: z.record(z.string(), z.array(z.string()).min(1).max(10)).optional(),
  scopes: z.array(z.string()).min(1).max(10).optional(),
  ideClientId: z.string().min(1).max(255).optional(),
  ideName: z.string().min(1).max(100).optional(),
}).strict();

/**
 * The operator API for trusted OpenID Connect issuers (trust, list, distrust), behind the `admin`
 * scope, inside the token gate's scope. This process sees a change at once, every other one within
 * the bound of ISSUERS_REFRESH_MS plus a read.
 */
export function registerAdminIssuerRoutes(api: FastifyInstance, issuers: IssuerStore, trusted: TrustedIssuers) {
  api.post(ADMIN_ISSUERS_PATH, adminHandler(async (request, reply) => {
    const created = await issuers.trust(parseInput(trustBody, request.body));
    trusted.forget();
    return reply.code(201).send(created);
  }));
  api.get(ADMIN_ISSUERS_PATH, adminHandler(async () => ({ issuers: (await issuers.list()).map(viewOf) })));
  api.delete(`${ADMIN_ISSUERS_PATH}/:issuerId`, adminHandler(async (request) => {
    const removed = await issuers.distrust(idParam(request, 'issuerId'));
    trusted.forget();
    return removed;
  }));
}

const scopeList = { type: 'array', items: { type: 'string', enum: ['b2b', 'roadside'] } };
const registration = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The registration id: the client id of its users\' requests' },
    issuer: { type: 'string', format: 'uri' }, audience: { type: 'string' }, organisation: { type: 'string' },
    userClaim: { type: 'string' }, scopesClaim: { type: ['string', 'null'] },
    scopeMap: { type: ['object', 'null'], additionalProperties: scopeList }, scopes: scopeList,
    ideClientId: { type: ['string', 'null'] }, ideName: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'issuer', 'audience', 'organisation', 'userClaim', 'scopesClaim', 'scopeMap', 'scopes', 'ideClientId', 'ideName', 'createdAt'],
};
const json = (schema: object) => ({ 'application/json': { schema } });

/** OpenAPI paths of the issuers' admin API. */
export const adminIssuerPaths = {
  [ADMIN_ISSUERS_PATH]: {
    post: {
      operationId: 'trustIssuer', tags: ['Admin'], security,
      summary: "Trust an organisation's OpenID Connect issuer for one audience; its users' tokens act in that organisation (operators: admin scope)",
      requestBody: {
        required: true,
        content: json({
          type: 'object', additionalProperties: false, required: ['issuer', 'organisation', 'audience'],
          properties: {
            issuer: { type: 'string', format: 'uri', description: 'Public https (loopback only with OIDC_ALLOW_LOOPBACK=true)' },
            organisation: { type: 'string', pattern: ORGANISATION_PATTERN.source }, audience: { type: 'string' },
            userClaim: { type: 'string', default: 'sub' }, scopesClaim: { type: 'string' },
            scopeMap: { type: 'object', additionalProperties: scopeList, description: 'The scopes each value of scopesClaim gives' },
            scopes: { ...scopeList, description: 'Granted to every user (default b2b without scopesClaim, none with it)' },
            ideClientId: { type: 'string', maxLength: 255, description: "The GraphQL IDE's public client id at the provider (redirect URI: the gateway's /graphql): the IDE offers sign-in with it" },
            ideName: { type: 'string', maxLength: 100, description: "The provider's name on the IDE's sign-in button (default: the issuer's host)" },
          },
        }),
      },
      responses: {
        201: { description: 'The registration', content: json(registration) },
        409: problem('The issuer is trusted for that audience already (in any organisation)'), ...adminBodyErrors, ...adminErrors,
      },
    },
    get: {
      operationId: 'listIssuers', summary: 'List trusted issuers (operators: admin scope)', tags: ['Admin'], security,
      responses: { 200: { description: 'Every registration', content: json({ type: 'object', properties: { issuers: { type: 'array', items: registration } }, required: ['issuers'] }) }, ...adminErrors },
    },
  },
  [`${ADMIN_ISSUERS_PATH}/{issuerId}`]: {
    delete: {
      operationId: 'distrustIssuer', tags: ['Admin'], security,
      summary: "Distrust an issuer registration: its users' tokens are refused on every gateway process within 2 s (operators: admin scope)",
      parameters: [{ name: 'issuerId', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { 200: { description: 'The removed registration', content: json(registration) }, 400: problem('Invalid input'), 404: problem('Unknown registration'), ...adminErrors },
    },
  },
};
