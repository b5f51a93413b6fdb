import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ParseOptions } from 'graphql';
import { z } from 'zod';
import { badInput, notFound } from '../../subgraphs/platform/errors.ts';
import type { ClientStore } from '../auth/clients.ts';
import type { IssuerStore } from '../auth/issuers.ts';
import { TRUST_MODES } from '../trusted/entities.ts';
import { parseManifest } from '../trusted/manifest.ts';
import type { DocumentOwner } from '../trusted/owner.ts';
import type { TrustedDocuments } from '../trusted/registry.ts';
import type { TrustedDocumentStore } from '../trusted/store.ts';
import { adminBodyErrors, adminErrors, adminHandler, adminSecurity, parseInput, problem } from './admin-api.ts';

export const ADMIN_DOCUMENTS_PATH = '/platform/admin/v1/trusted-documents';
/** A manifest of an app's few thousand operations fits; the gateway's other bodies stay at 1 MiB. */
export const MANIFEST_BODY_LIMIT = 16 * 1024 * 1024;

const ownerId = z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII');
const ownerFields = { clientId: ownerId.optional(), issuerId: ownerId.optional() };
const publishBody = z.object({ ...ownerFields, name: z.string().min(1).max(200).optional(), manifest: z.unknown() }).strict();
const modeBody = z.object({ ...ownerFields, mode: z.enum(TRUST_MODES) }).strict();
const listQuery = z.object(ownerFields).strict();
const manifestIdParam = z.uuid('manifestId must be a manifest id (a UUID)');

export interface AdminDocumentsOptions {
  store: TrustedDocumentStore;
  trusted: TrustedDocuments;
  clients: ClientStore;
  issuers: IssuerStore;
  parseOptions: ParseOptions;
}

/**
 * The operator API for trusted documents (publish, list and retire manifests; set a mode), behind the
 * `admin` scope. A manifest and a mode belong to an API client (`clientId`) or an issuer registration
 * (`issuerId`). This process applies a change at once, the others within 2 s (registry.ts).
 */
export function registerAdminDocumentRoutes(api: FastifyInstance, { store, trusted, clients, issuers, parseOptions }: AdminDocumentsOptions) {
  const ownerOf = async (given: { clientId?: string; issuerId?: string }, required: boolean): Promise<DocumentOwner | undefined> => {
    if (given.clientId !== undefined && given.issuerId !== undefined) throw badInput('Give clientId or issuerId, not both', 'clientId');
    if (given.clientId !== undefined) {
      if (!(await clients.find(given.clientId))) throw notFound('Client', given.clientId);
      return { kind: 'client', id: given.clientId };
    }
    if (given.issuerId !== undefined) {
      if (!(await issuers.find(given.issuerId))) throw notFound('Issuer registration', given.issuerId);
      return { kind: 'issuer', id: given.issuerId };
    }
    if (required) throw badInput('Name the owner: clientId (an API client) or issuerId (an issuer registration)', 'clientId');
    return undefined;
  };

  api.post(`${ADMIN_DOCUMENTS_PATH}/manifests`, { bodyLimit: MANIFEST_BODY_LIMIT }, adminHandler(async (request, reply) => {
    const body = parseInput(publishBody, request.body);
    const owner = (await ownerOf(body, true))!;
    const published = await store.publish(owner, parseManifest(body.manifest, parseOptions), body.name ?? null);
    trusted.forget(owner);
    return reply.code(201).send(published);
  }));
  api.get(`${ADMIN_DOCUMENTS_PATH}/manifests`, adminHandler(async (request) => {
    const owner = await ownerOf(parseInput(listQuery, request.query), false);
    return store.list(owner);
  }));
  api.post(`${ADMIN_DOCUMENTS_PATH}/manifests/:manifestId/retire`, adminHandler(async (request: FastifyRequest) => {
    const parsed = manifestIdParam.safeParse((request.params as { manifestId: string }).manifestId);
    if (!parsed.success) throw badInput(parsed.error.issues[0]!.message, 'manifestId');
    const retired = await store.retire(parsed.data);
    trusted.forget(retired.owner);
    return retired;
  }));
  api.put(`${ADMIN_DOCUMENTS_PATH}/mode`, adminHandler(async (request) => {
    const body = parseInput(modeBody, request.body);
    const owner = (await ownerOf(body, true))!;
    const set = await store.setMode(owner, body.mode);
    trusted.forget(owner);
    return set;
  }));
}

const ownerSchema = {
  type: 'object', required: ['kind', 'id'],
  properties: { kind: { type: 'string', enum: ['client', 'issuer'] }, id: { type: 'string' } },
};
/** The two manifest formats the publish body takes (gateway/trusted/manifest.ts reads and checks them). */
const manifestInput = {
  description: 'The manifest, in either format',
  oneOf: [{
    type: 'object', title: "Apollo's persisted query manifest", required: ['format', 'version', 'operations'],
    properties: {
      format: { type: 'string', enum: ['apollo-persisted-query-manifest'] }, version: { type: 'integer', enum: [1] },
      operations: {
        type: 'array',
        items: {
          type: 'object', required: ['id', 'body'],
          properties: {
            id: { type: 'string' }, name: { type: 'string' }, type: { type: 'string', enum: ['query', 'mutation', 'subscription'] },
            body: { type: 'string', description: 'The document' },
          },
        },
      },
    },
  }, {
    type: 'object', title: "GraphQL Code Generator's persisted-documents.json", description: 'Document id to document',
    additionalProperties: { type: 'string' },
  }],
};

const manifestSchema = {
  type: 'object', required: ['manifestId', 'owner', 'name', 'format', 'documents', 'publishedAt', 'retiredAt'],
  properties: {
    manifestId: { type: 'string', format: 'uuid' }, owner: ownerSchema, name: { type: ['string', 'null'] },
    format: { type: 'string', enum: ['apollo', 'codegen'] }, documents: { type: 'integer' },
    publishedAt: { type: 'string', format: 'date-time' }, retiredAt: { type: ['string', 'null'], format: 'date-time' },
  },
};
const ownerProperties = {
  clientId: { type: 'string', description: 'An API client: the manifest or mode is its own', example: 'client_3f6c0d2a9b8e4f1aa7c5e2d1b0c9f8e7' },
  issuerId: { type: 'string', description: 'An issuer registration: for the end users it admits', example: 'issuer_7d2e9a1c4b6f4e0b9c3a8d5f1e2b7c6a' },
};
const json = (schema: object) => ({ 'application/json': { schema } });
const modeSchema = { type: 'object', required: ['owner', 'mode'], properties: { owner: ownerSchema, mode: { type: 'string', enum: [...TRUST_MODES] } } };
const tags = ['Admin'];
const security = adminSecurity;

/** OpenAPI paths of the trusted documents' admin API. */
export const adminDocumentPaths = {
  [`${ADMIN_DOCUMENTS_PATH}/manifests`]: {
    post: {
      operationId: 'publishManifest', summary: 'Publish a manifest of trusted documents for a client or an issuer registration (operators: admin scope)',
      description: "Apollo's persisted query manifest (`format: apollo-persisted-query-manifest`) or GraphQL Code Generator's `persisted-documents.json` (`{ id: document }`). Give `clientId` or `issuerId`.",
      tags, security,
      requestBody: {
        required: true,
        content: json({ type: 'object', required: ['manifest'], additionalProperties: false, properties: { ...ownerProperties, name: { type: 'string', maxLength: 200 }, manifest: manifestInput } }),
      },
      responses: { 201: { description: 'The manifest, in force', content: json(manifestSchema) }, 404: problem('Unknown client or issuer registration'), ...adminBodyErrors, ...adminErrors },
    },
    get: {
      operationId: 'listManifests', summary: 'List manifests (retired ones too) and modes, of one owner or of all (operators: admin scope)', tags, security,
      parameters: Object.entries(ownerProperties).map(([name, { description, example }]) => ({ name, in: 'query', required: false, schema: { type: 'string' }, description, example })),
      responses: {
        200: {
          description: 'Manifests and modes',
          content: json({ type: 'object', required: ['manifests', 'modes'], properties: { manifests: { type: 'array', items: manifestSchema }, modes: { type: 'array', items: modeSchema } } }),
        },
        400: problem('Invalid input'), 404: problem('Unknown client or issuer registration'), ...adminErrors,
      },
    },
  },
  [`${ADMIN_DOCUMENTS_PATH}/manifests/{manifestId}/retire`]: {
    post: {
      operationId: 'retireManifest', summary: 'Retire a manifest: its documents are no longer trusted (operators: admin scope)', tags, security,
      parameters: [{ name: 'manifestId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      responses: { 200: { description: 'The manifest, retired', content: json(manifestSchema) }, 400: problem('Invalid input'), 404: problem('Unknown manifest'), ...adminErrors },
    },
  },
  [`${ADMIN_DOCUMENTS_PATH}/mode`]: {
    put: {
      operationId: 'setTrustMode', summary: 'Set the trusted documents mode of a client or an issuer registration: off, audit or enforce (operators: admin scope)',
      tags, security,
      requestBody: {
        required: true,
        content: json({ type: 'object', required: ['mode'], additionalProperties: false, properties: { ...ownerProperties, mode: { type: 'string', enum: [...TRUST_MODES] } } }),
      },
      responses: { 200: { description: 'The mode, in force', content: json(modeSchema) }, 404: problem('Unknown client or issuer registration'), ...adminBodyErrors, ...adminErrors },
    },
  },
};
