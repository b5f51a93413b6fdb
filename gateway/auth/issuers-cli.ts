/**
 * Manages the OpenID Connect issuers organisations trust for their end users.
 *   npm run issuers -- trust <issuer URL> --org <org> --audience <aud> [--user-claim sub]
 *                          [--scopes-claim <claim> --map VALUE=scope,...] [--scopes b2b]
 *                          [--ide-client-id <id> [--ide-name <name>]]   prints the registration as JSON
 *   npm run issuers -- list
 *   npm run issuers -- distrust <registration id>
 * Through the running gateway's admin API like `npm run clients` (same operator client options), so
 * every gateway process sees the change within 2 s; only when none answers, the database directly.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { refuseCleanly, StartRefused } from '../../subgraphs/platform/start-refused.ts';
import { ADMIN_ISSUERS_PATH } from '../admin/issuers-routes.ts';
import { adminApi, gatewayAnswers } from '../admin/admin-cli.ts';
import type { TrustRequest } from './issuers.ts';

const usage = 'Usage: npm run issuers -- trust <issuer URL> --org <org> --audience <aud> [--user-claim sub] [--scopes-claim <claim> --map VALUE=scope,...] [--scopes b2b]\n' +
  '      [--ide-client-id <the IDE\'s public client id at the provider> [--ide-name <its name on the sign-in button>]]\n' +
  '  | list | distrust <registration id>\n  [--url http://127.0.0.1:4000] [--client-id <operator client> --client-secret <its secret>]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    org: { type: 'string' }, audience: { type: 'string' }, 'user-claim': { type: 'string' }, 'scopes-claim': { type: 'string' },
    map: { type: 'string' }, scopes: { type: 'string' }, 'ide-client-id': { type: 'string' }, 'ide-name': { type: 'string' },
    url: { type: 'string' }, 'client-id': { type: 'string' }, 'client-secret': { type: 'string' },
  },
});
const [command, argument] = positionals;
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const url = (values.url ?? `http://127.0.0.1:${config.PORT}`).replace(/\/+$/, '');
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

/** The database, when no gateway answers: its modules (the whole stack's) are loaded only then. */
async function direct(): Promise<Operations> {
  const [{ openDatabase }, { GATEWAY_ENTITIES, GATEWAY_MIGRATIONS }, { IssuerStore, viewOf }] = await Promise.all([
    import('../../subgraphs/platform/db/orm.ts'), import('../stack.ts'), import('./issuers.ts')]);
  const db = await openDatabase(config, { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: GATEWAY_MIGRATIONS }).catch((error: unknown) => {
    if (error instanceof StartRefused) throw new StartRefused(`no gateway answered at ${url}, and ${error.message} If that process is a gateway listening elsewhere, pass its address with --url.`);
    throw error;
  });
  const store = new IssuerStore(db.orm.em, { allowLoopback: config.OIDC_ALLOW_LOOPBACK });
  return {
    trust: (request) => store.trust(request),
    list: async () => (await store.list()).map(viewOf),
    distrust: (id) => store.distrust(id),
    close: () => db.close(),
  };
}

if (!['trust', 'list', 'distrust'].includes(command ?? '') || (command !== 'list' && !argument)) {
  console.error(usage);
  process.exit(2);
}
const operations = await refuseCleanly(async () => ((await gatewayAnswers(url)) ? throughServer() : direct())).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
let exitCode = 0;
try {
  let result: unknown;
  if (command === 'trust') {
    if (!values.org || !values.audience) throw new Error('trust needs --org and --audience');
    result = await operations.trust({
      issuer: argument!, organisation: values.org, audience: values.audience, userClaim: values['user-claim'],
      scopesClaim: values['scopes-claim'], scopeMap: scopeMapOf(list(values.map)), scopes: list(values.scopes),
      ideClientId: values['ide-client-id'], ideName: values['ide-name'],
    });
  } else result = command === 'list' ? await operations.list() : await operations.distrust(argument!);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  console.error((error as Error).message);
  exitCode = 1;
} finally {
  await operations.close();
}
process.exit(exitCode);
