import { defineEntity, p, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import { SCOPES, type Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { badInput, conflict, notFound } from '../../subgraphs/platform/errors.ts';
import { parseOrganisation } from '../../subgraphs/platform/organisation.ts';
import { SandboxOrganisation, sandboxOrganisationOf } from '../sandbox/organisations.ts';
import { generateSecret, hashSecret, verifySecret } from './secrets.ts';

/** An API client. Not tenant-filtered: it is how a caller's organisation is found in the first place. */
export const ClientSchema = defineEntity({
  name: 'Client',
  tableName: 'clients',
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    clientId: p.string().length(128).unique(),
    secretHash: p.string().length(255),
    organisation: p.string().length(128),
    scopes: p.array(),
    disabled: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    secretRotatedAt: p.datetime().onCreate(() => new Date()),
    /** Incremented by a rotation and a disable; tokens carry the generation they were issued under. */
    secretGeneration: p.integer().default(0),
    /** A client of a sandbox organisation (gateway/sandbox/organisations.ts): its tokens carry `sbx`. */
    sandbox: p.boolean().default(false),
  },
});
export class Client extends ClientSchema.class {}
ClientSchema.setClass(Client);

export function parseScopes(value: string | string[]): Scope[] {
  const list = (Array.isArray(value) ? value : value.split(/[\s,]+/)).map((s) => s.trim()).filter(Boolean);
  const unknown = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length || !list.length) throw badInput(`scopes must be a non-empty list of ${SCOPES.join(', ')}; got ${JSON.stringify(value)}`, 'scopes');
  return [...new Set(list)] as Scope[];
}

export interface IssuedCredentials {
  clientId: string; clientSecret: string; organisation: string; scopes: Scope[];
  /** A sandbox client: `organisation` is `<liveOrganisation>-sandbox`. */
  sandbox?: true; liveOrganisation?: string;
}

export class ClientStore {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async create(organisation: string, scopes: Scope[], clientId = `client_${crypto.randomUUID().replaceAll('-', '')}`, clientSecret = generateSecret()): Promise<IssuedCredentials> {
    parseOrganisation(organisation);
    const em = this.em.fork();
    if (await em.count(Client, { clientId })) throw conflict(`client '${clientId}' already exists`);
    if (await em.count(SandboxOrganisation, { organisation })) {
      throw conflict(`'${organisation}' is a sandbox organisation: create its clients with sandbox for its live organisation`);
    }
    em.create(Client, { clientId, secretHash: await hashSecret(clientSecret), organisation, scopes, disabled: false } as never);
    await em.flush();
    return { clientId, clientSecret, organisation, scopes };
  }

  /**
   * A client of `live`'s sandbox organisation, `<live>-sandbox`, made and linked on first use. Refused
   * for a sandbox organisation's own sandbox, and when live clients already use that name.
   */
  async createSandbox(live: string, scopes: Scope[]): Promise<IssuedCredentials> {
    parseOrganisation(live);
    const organisation = sandboxOrganisationOf(live);
    try {
      parseOrganisation(organisation);
    } catch {
      throw badInput(`organisation '${live}' is too long for a sandbox ('${organisation}' exceeds 64 characters)`, 'organisation');
    }
    const em = this.em.fork();
    if (await em.count(SandboxOrganisation, { organisation: live })) throw conflict(`'${live}' is itself a sandbox organisation`);
    if (await em.count(Client, { organisation, sandbox: false })) throw conflict(`live clients already use the organisation '${organisation}'`);
    // Made on first use; a concurrent first use has made it too.
    await em.fork().insert(SandboxOrganisation, { organisation, liveOrganisation: live, createdAt: new Date() }).catch((error: unknown) => {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
    });
    const clientId = `client_${crypto.randomUUID().replaceAll('-', '')}`;
    const clientSecret = generateSecret();
    em.create(Client, { clientId, secretHash: await hashSecret(clientSecret), organisation, scopes, disabled: false, sandbox: true } as never);
    await em.flush();
    return { clientId, clientSecret, organisation, scopes, sandbox: true, liveOrganisation: live };
  }

  /** Registers the bootstrap client, or updates its secret, organisation and scopes to match the environment. */
  async ensure(clientId: string, clientSecret: string, organisation: string, scopes: Scope[]): Promise<void> {
    const em = this.em.fork();
    const existing = await em.findOne(Client, { clientId });
    if (!existing) {
      await this.create(organisation, scopes, clientId, clientSecret);
      return;
    }
    if (!(await verifySecret(clientSecret, existing.secretHash))) {
      existing.secretHash = await hashSecret(clientSecret);
      existing.secretRotatedAt = new Date();
      existing.secretGeneration += 1;
    }
    Object.assign(existing, { organisation, scopes, disabled: false });
    await em.flush();
  }

  /** The client when the id and secret match an enabled client, else null (no hint which part failed). */
  async authenticate(clientId: string, clientSecret: string): Promise<Client | null> {
    const client = await this.em.fork().findOne(Client, { clientId });
    const ok = client ? await verifySecret(clientSecret, client.secretHash) : await verifySecret(clientSecret, DUMMY_HASH);
    return client && ok && !client.disabled ? client : null;
  }

  async find(clientId: string): Promise<Client | null> {
    return this.em.fork().findOne(Client, { clientId });
  }

  async list(): Promise<Omit<Client, 'secretHash'>[]> {
    const clients = await this.em.fork().find(Client, {}, { orderBy: { createdAt: 'asc' } });
    return clients.map(({ secretHash: _secret, ...rest }) => rest as Omit<Client, 'secretHash'>);
  }

  async rotate(clientId: string): Promise<IssuedCredentials> {
    const em = this.em.fork();
    const client = await em.findOne(Client, { clientId });
    if (!client) throw notFound('Client', clientId);
    const clientSecret = generateSecret();
    client.secretHash = await hashSecret(clientSecret);
    client.secretRotatedAt = new Date();
    client.secretGeneration += 1;
    await em.flush();
    return { clientId, clientSecret, organisation: client.organisation, scopes: client.scopes as Scope[] };
  }

  async setDisabled(clientId: string, disabled: boolean): Promise<void> {
    const em = this.em.fork();
    const client = await em.findOne(Client, { clientId });
    if (!client) throw notFound('Client', clientId);
    // A disable revokes every token issued so far, also once the client is enabled again.
    if (disabled && !client.disabled) client.secretGeneration += 1;
    client.disabled = disabled;
    await em.flush();
  }

  async count(): Promise<number> {
    return this.em.fork().count(Client, {});
  }
}

// Verifying against a fixed hash for unknown ids keeps response time from revealing which ids exist.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
