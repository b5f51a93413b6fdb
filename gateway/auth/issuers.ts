import { defineEntity, p, type EntityManager } from '@mikro-orm/core';
import type { Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { badInput, conflict, isConstraintConflict, notFound } from '../../subgraphs/platform/errors.ts';
import { parseOrganisation } from '../../subgraphs/platform/organisation.ts';
import { parsePublicUrl, type AddressPolicy } from '../../subgraphs/platform/public-address.ts';
import { parseScopes } from './clients.ts';

/**
 * An organisation's OpenID Connect provider, trusted for one audience: its tokens act in that
 * organisation, as the user its `userClaim` names, with the scopes the registration grants. The id
 * is the caller's client id. `(issuer, audience)` is unique over every organisation: a
 * multi-tenant issuer needs an audience per organisation.
 */
export const IssuerRegistrationSchema = defineEntity({
  name: 'IssuerRegistration',
  tableName: 'issuers',
  uniques: [{ properties: ['issuer', 'audience'], name: 'issuers_issuer_audience_unique' }],
  properties: {
    id: p.string().length(64).primary(),
    issuer: p.string().length(2048),
    audience: p.string().length(255),
    organisation: p.string().length(128),
    userClaim: p.string().length(64),
    /** A claim (string or array of strings) whose values `scopeMap` turns into scopes. */
    scopesClaim: p.string().length(64).nullable(),
    scopeMap: p.json<Record<string, Scope[]>>().nullable(),
    /** Granted to every user of the registration, besides the mapped ones. */
    scopes: p.array(),
    /** The GraphQL IDE's public client id at this provider: the IDE offers "Sign in with" it (code + PKCE). */
    ideClientId: p.string().length(255).nullable(),
    /** What the IDE's sign-in button names the provider (default: the issuer's host). */
    ideName: p.string().length(100).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class IssuerRegistration extends IssuerRegistrationSchema.class {}
IssuerRegistrationSchema.setClass(IssuerRegistration);

/** What an operator sends to trust an issuer. */
export interface TrustRequest {
  issuer: string;
  organisation: string;
  audience: string;
  userClaim?: string;
  scopesClaim?: string;
  /** The scopes each value of `scopesClaim` gives. */
  scopeMap?: Record<string, string[]>;
  scopes?: string[];
  /** The IDE's public client id at the provider, whose redirect URI is the gateway's `/graphql`. */
  ideClientId?: string;
  ideName?: string;
}

export type IssuerView = Omit<IssuerRegistration, 'createdAt'> & { createdAt: string };

const CLAIM = /^[A-Za-z0-9_.:-]{1,64}$/;
const claimName = (value: string, field: string) => {
  if (!CLAIM.test(value)) throw badInput(`${field} must be a claim name: 1 to 64 letters, digits, '_', '.', ':' or '-'`, field);
  return value;
};
/** End users never operate the service: `admin` is not theirs to get. */
const userScopes = (value: string[], field: string) => {
  const scopes = parseScopes(value);
  if (scopes.includes('admin')) throw badInput("end users cannot be granted the 'admin' scope", field);
  return scopes;
};

function parseMap(given: Record<string, string[]>): Record<string, Scope[]> {
  const entries = Object.entries(given);
  if (entries.length > 100) throw badInput('scopeMap holds at most 100 values', 'scopeMap');
  return Object.fromEntries(entries.map(([value, scopes]) => {
    if (!value || value.length > 255) throw badInput('scopeMap values are 1 to 255 characters', 'scopeMap');
    return [value, userScopes(scopes, 'scopeMap')];
  }));
}

/** Printable text of 1 to `max` characters, or null when not given. */
const ideText = (value: string | undefined, field: string, max: number): string | null => {
  if (value === undefined) return null;
  const text = value.trim();
  if (!text || text.length > max || [...text].some((c) => c < ' ' || c === '\u007f')) {
    throw badInput(`${field} must be 1 to ${max} printable characters`, field);
  }
  return text;
};

/** The issuer URL as tokens name it (`iss`): kept as given, once its address is checked. */
function parseIssuer(raw: string, policy: AddressPolicy): string {
  const url = parsePublicUrl(raw, { ...policy, role: 'issuers' }, 'issuer');
  if (url.search) throw badInput('issuer must not have a query string', 'issuer');
  return raw.trim();
}

export const viewOf = ({ createdAt, ...rest }: IssuerRegistration): IssuerView => ({ ...rest, createdAt: createdAt.toISOString() });

export class IssuerStore {
  private readonly em: EntityManager;
  private readonly policy: AddressPolicy;
  constructor(em: EntityManager, policy: AddressPolicy) {
    this.em = em;
    this.policy = policy;
  }

  async trust(request: TrustRequest): Promise<IssuerView> {
    const mapped = Object.keys(request.scopeMap ?? {}).length > 0;
    if (!request.scopesClaim !== !mapped) throw badInput('scopesClaim and scopeMap go together', request.scopesClaim ? 'scopeMap' : 'scopesClaim');
    const audience = request.audience.trim();
    if (!audience || audience.length > 255) throw badInput('audience must be 1 to 255 characters', 'audience');
    const row = {
      id: `issuer_${crypto.randomUUID().replaceAll('-', '')}`,
      issuer: parseIssuer(request.issuer, this.policy),
      audience,
      organisation: parseOrganisation(request.organisation),
      userClaim: claimName(request.userClaim ?? 'sub', 'userClaim'),
      scopesClaim: request.scopesClaim ? claimName(request.scopesClaim, 'scopesClaim') : null,
      scopeMap: mapped ? parseMap(request.scopeMap!) : null,
      // With a scopes claim, users get what it maps to unless more is granted to all.
      scopes: request.scopes?.length ? userScopes(request.scopes, 'scopes') : request.scopesClaim ? [] : ['b2b'],
      ideClientId: ideText(request.ideClientId, 'ideClientId', 255),
      ideName: ideText(request.ideName, 'ideName', 100),
    };
    if (row.ideName && !row.ideClientId) {
      throw badInput('ideName names the IDE\'s sign-in: it needs ideClientId', 'ideName');
    }
    const em = this.em.fork();
    const created = em.create(IssuerRegistration, row as never);
    try {
      await em.flush();
    } catch (error) {
      if (isConstraintConflict(error)) throw conflict(`issuer ${row.issuer} is already trusted for audience '${audience}'; each (issuer, audience) belongs to one organisation`);
      throw error;
    }
    return viewOf(created);
  }

  async distrust(id: string): Promise<IssuerView> {
    const em = this.em.fork();
    const registration = await em.findOne(IssuerRegistration, { id });
    if (!registration) throw notFound('Issuer registration', id);
    await em.remove(registration).flush();
    return viewOf(registration);
  }

  async find(id: string): Promise<IssuerRegistration | null> {
    return this.em.fork().findOne(IssuerRegistration, { id });
  }

  async list(): Promise<IssuerRegistration[]> {
    return this.em.fork().find(IssuerRegistration, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }
}
