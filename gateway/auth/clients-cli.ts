/**
 * Manages API clients.
 *   npm run clients -- create [--org <org>] [--scopes b2b,roadside]  prints {clientId, clientSecret, ...} as JSON (org: BOOTSTRAP_ORG)
 *   npm run clients -- create --sandbox [--org <org>]                a client of <org>-sandbox (docs/sandbox.md)
 *   npm run clients -- list
 *   npm run clients -- rotate <clientId>                              prints the new secret as JSON
 *   npm run clients -- disable <clientId> | enable <clientId>
 * When a gateway answers at --url (default http://127.0.0.1:$PORT), the change goes through its admin
 * API, authenticated as an operator client (--client-id/--client-secret, default ADMIN_CLIENT_ID /
 * ADMIN_CLIENT_SECRET, else BOOTSTRAP_CLIENT_ID / BOOTSTRAP_CLIENT_SECRET, else CLIENT_ID / CLIENT_SECRET
 * as the start prints them for the development client); every gateway process
 * sees it at once. Only when nothing listens there (connection refused) does it open the database
 * (DATABASE_URL / DATA_DIR) directly; a gateway that listens but does not answer /healthz is an error.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { GATEWAY_MIGRATIONS } from '../stack.ts';
import { ADMIN_CLIENTS_PATH } from '../admin/clients-routes.ts';
import { ADMIN_OPTIONS, ADMIN_USAGE, adminApi, adminUrl, openDirect, runAdminCommand } from '../admin/admin-cli.ts';
import { SandboxOrganisation } from '../sandbox/organisations.ts';
import { Client, ClientStore, parseScopes } from './clients.ts';

const usage = 'Usage: npm run clients -- create [--sandbox] [--org <org>] [--scopes b2b,roadside] | list | rotate <clientId> | disable <clientId> | enable <clientId>\n' +
  ADMIN_USAGE;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { org: { type: 'string' }, scopes: { type: 'string', default: 'b2b,roadside' }, sandbox: { type: 'boolean' }, ...ADMIN_OPTIONS },
});
const [command, clientId] = positionals;
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const url = adminUrl(values.url, config);

interface Operations {
  create(org: string, scopes: string[], sandbox: boolean): Promise<unknown>;
  list(): Promise<unknown>;
  rotate(id: string): Promise<unknown>;
  setDisabled(id: string, disabled: boolean): Promise<unknown>;
  close(): Promise<void>;
}

/** The running gateway's admin API, with an operator token. */
async function throughServer(): Promise<Operations> {
  const call = await adminApi(url, config, values);
  const at = (path: string) => `${ADMIN_CLIENTS_PATH}${path}`;
  return {
    create: (org, scopes, sandbox) => call('POST', at(''), { organisation: org, scopes, sandbox }),
    list: async () => (await call('GET', at(''))).clients,
    rotate: (id) => call('POST', at(`/${encodeURIComponent(id)}/rotate`)),
    setDisabled: (id, disabled) => call('POST', at(`/${encodeURIComponent(id)}/${disabled ? 'disable' : 'enable'}`)),
    close: async () => undefined,
  };
}

/** The database, when nothing listens at --url. On the embedded default a running server holds the data folder, and this is refused. */
async function direct(): Promise<Operations> {
  const db = await openDirect(config, url, { name: 'platform', entities: [Client, SandboxOrganisation], migrationsPath: GATEWAY_MIGRATIONS });
  const store = new ClientStore(db.orm.em);
  return {
    create: (org, scopes, sandbox) => (sandbox ? store.createSandbox(org, parseScopes(scopes)) : store.create(org, parseScopes(scopes))),
    list: () => store.list(),
    rotate: (id) => store.rotate(id),
    setDisabled: async (id, disabled) => { await store.setDisabled(id, disabled); return { clientId: id, disabled }; },
    close: () => db.close(),
  };
}

async function run(operations: Operations): Promise<unknown> {
  switch (command) {
    case 'create':
      return operations.create(values.org ?? config.BOOTSTRAP_ORG, parseScopes(values.scopes), values.sandbox === true);
    case 'list':
      return operations.list();
    case 'rotate':
      return operations.rotate(clientId!);
    default:
      return operations.setDisabled(clientId!, command === 'disable');
  }
}

await runAdminCommand({
  url, usage, throughServer, direct, run,
  valid: ['create', 'list'].includes(command ?? '') || (['rotate', 'disable', 'enable'].includes(command ?? '') && !!clientId),
});
