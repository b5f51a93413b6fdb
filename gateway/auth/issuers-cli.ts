/**
 * Manages the OpenID Connect issuers organisations trust for their end users.
 *   npm run issuers -- trust <issuer URL> --org <org> --audience <aud> [--user-claim sub]
 *                          [--scopes-claim <claim> --map VALUE=scope,...] [--scopes b2b]
 *                          [--ide-client-id <id> [--ide-name <name>]]   prints the registration as JSON
 *   npm run issuers -- list
 *   npm run issuers -- distrust <registration id>
 * Through the running gateway's admin API like `npm run clients` (same operator client options), so
 * every gateway process sees the change within 2 s; only when nothing listens at --url, the database directly.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { ADMIN_ISSUERS_PATH } from '../admin/issuers-routes.ts';
import { ADMIN_OPTIONS, ADMIN_USAGE, adminApi, adminUrl, openDirect, runAdminCommand } from '../admin/admin-cli.ts';
import type { TrustRequest } from './issuers.ts';

const usage = 'Usage: npm run issuers -- trust <issuer URL> --org <org> --audience <aud> [--user-claim sub] [--scopes-claim <claim> --map VALUE=scope,...] [--scopes b2b]\n' +
  '      [--ide-client-id <the IDE\'s public client id at the provider> [--ide-name <its name on the sign-in button>]]\n' +
  `  | list | distrust <registration id>\n${ADMIN_USAGE}`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    org: { type: 'string' }, audience: { type: 'string' }, 'user-claim': { type: 'string' }, 'scopes-claim': { type: 'string' },
    map: { type: 'string' }, scopes: { type: 'string' }, 'ide-client-id': { type: 'string' }, 'ide-name': { type: 'string' },
    ...ADMIN_OPTIONS,
  },
});
const [command, argument] = positionals;
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const url = adminUrl(values.url, config);
const list = (value: string | undefined) => value?.split(',').map((s) => s.trim()).filter(Boolean);

/** `VALUE=scope,VALUE=scope`: a value named twice gets both scopes. */
function scopeMapOf(pairs: string[] | undefined): Record<string, string[]> | undefined {
  if (!pairs) return undefined;
  const map: Record<string, string[]> = {};
  for (const pair of pairs) {
    const at = pair.lastIndexOf('=');
    if (at <= 0) throw new Error(`--map takes VALUE=scope pairs; got '${pair}'`);
    (map[pair.slice(0, at)] ??= []).push(pair.slice(at + 1));
  }
  return map;
}

interface Operations {
  trust(request: TrustRequest): Promise<unknown>;
  list(): Promise<unknown>;
  distrust(id: string): Promise<unknown>;
  close(): Promise<void>;
}

async function throughServer(): Promise<Operations> {
  const api = await adminApi(url, config, values);
  return {
    trust: (request) => api('POST', ADMIN_ISSUERS_PATH, request),
    list: async () => (await api('GET', ADMIN_ISSUERS_PATH)).issuers,
    distrust: (id) => api('DELETE', `${ADMIN_ISSUERS_PATH}/${encodeURIComponent(id)}`),
    close: async () => undefined,
  };
}

/** The database, when nothing listens at --url: its modules (the whole stack's) are loaded only then. */
async function direct(): Promise<Operations> {
  const [{ GATEWAY_ENTITIES, GATEWAY_MIGRATIONS }, { IssuerStore, viewOf }] = await Promise.all([import('../stack.ts'), import('./issuers.ts')]);
  const db = await openDirect(config, url, { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: GATEWAY_MIGRATIONS });
  const store = new IssuerStore(db.orm.em, { allowLoopback: config.OIDC_ALLOW_LOOPBACK });
  return {
    trust: (request) => store.trust(request),
    list: async () => (await store.list()).map(viewOf),
    distrust: (id) => store.distrust(id),
    close: () => db.close(),
  };
}

async function run(operations: Operations): Promise<unknown> {
  if (command === 'list') return operations.list();
  if (command === 'distrust') return operations.distrust(argument!);
  if (!values.org || !values.audience) throw new Error('trust needs --org and --audience');
  return operations.trust({
    issuer: argument!, organisation: values.org, audience: values.audience, userClaim: values['user-claim'],
    scopesClaim: values['scopes-claim'], scopeMap: scopeMapOf(list(values.map)), scopes: list(values.scopes),
    ideClientId: values['ide-client-id'], ideName: values['ide-name'],
  });
}

await runAdminCommand({
  url, usage, throughServer, direct, run,
  valid: ['trust', 'list', 'distrust'].includes(command ?? '') && (command === 'list' || !!argument),
});
