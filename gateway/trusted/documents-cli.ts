/**
 * Trusted documents, through the running gateway's admin API (an operator client, as `npm run clients`).
 *   npm run documents -- publish <manifest.json> --client <clientId> | --issuer <issuerId> [--name <label>]
 *   npm run documents -- list [--client <clientId> | --issuer <issuerId>]
 *   npm run documents -- retire <manifestId>
 *   npm run documents -- mode off|audit|enforce --client <clientId> | --issuer <issuerId>
 * The manifest is Apollo's persisted query manifest or GraphQL Code Generator's persisted-documents.json.
 * Options: --url (default http://127.0.0.1:$PORT), --client-id/--client-secret (the operator client).
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { adminApi, gatewayAnswers } from '../admin/admin-cli.ts';
import { ADMIN_DOCUMENTS_PATH } from '../admin/documents-routes.ts';

const usage = 'Usage: npm run documents -- publish <manifest.json> (--client <id> | --issuer <id>) [--name <label>] | list [--client <id> | --issuer <id>]\n' +
  '  | retire <manifestId> | mode off|audit|enforce (--client <id> | --issuer <id>)\n' +
  '  [--url http://127.0.0.1:4000] [--client-id <operator client> --client-secret <its secret>]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    client: { type: 'string' }, issuer: { type: 'string' }, name: { type: 'string' },
    url: { type: 'string' }, 'client-id': { type: 'string' }, 'client-secret': { type: 'string' },
  },
});
const [command, argument] = positionals;
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const url = (values.url ?? `http://127.0.0.1:${config.PORT}`).replace(/\/+$/, '');
const owner = { ...(values.client ? { clientId: values.client } : {}), ...(values.issuer ? { issuerId: values.issuer } : {}) };

async function run(): Promise<unknown> {
  if (!(await gatewayAnswers(url))) throw new Error(`No gateway answers at ${url}: start it, or pass its address with --url`);
  const call = await adminApi(url, config, values);
  switch (command) {
    case 'publish': {
      const manifest = JSON.parse(await readFile(argument!, 'utf8')) as unknown;
      return call('POST', `${ADMIN_DOCUMENTS_PATH}/manifests`, { ...owner, name: values.name ?? basename(argument!), manifest });
    }
    case 'list':
      return call('GET', `${ADMIN_DOCUMENTS_PATH}/manifests?${new URLSearchParams(owner)}`);
    case 'retire':
      return call('POST', `${ADMIN_DOCUMENTS_PATH}/manifests/${encodeURIComponent(argument!)}/retire`);
    default:
      return call('PUT', `${ADMIN_DOCUMENTS_PATH}/mode`, { ...owner, mode: argument });
  }
}

const needsArgument = ['publish', 'retire', 'mode'].includes(command ?? '');
if (!['publish', 'list', 'retire', 'mode'].includes(command ?? '') || (needsArgument && !argument)) {
  console.error(usage);
  process.exit(2);
}
try {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
