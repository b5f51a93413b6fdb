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
import { ADMIN_OPTIONS, ADMIN_USAGE, adminApi, adminUrl, runAdminCommand, type AdminCall } from '../admin/admin-cli.ts';
import { ADMIN_DOCUMENTS_PATH } from '../admin/documents-routes.ts';

const usage = 'Usage: npm run documents -- publish <manifest.json> (--client <id> | --issuer <id>) [--name <label>] | list [--client <id> | --issuer <id>]\n' +
  `  | retire <manifestId> | mode off|audit|enforce (--client <id> | --issuer <id>)\n${ADMIN_USAGE}`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { client: { type: 'string' }, issuer: { type: 'string' }, name: { type: 'string' }, ...ADMIN_OPTIONS },
});
const [command, argument] = positionals;
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const url = adminUrl(values.url, config);
const owner = { ...(values.client ? { clientId: values.client } : {}), ...(values.issuer ? { issuerId: values.issuer } : {}) };

/** Only through a running gateway: manifests must reach every process's registry. */
async function throughServer() {
  const call = await adminApi(url, config, values);
  return { call, close: async () => undefined };
}

async function run({ call }: { call: AdminCall }): Promise<unknown> {
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
await runAdminCommand({
  url, usage, throughServer, run,
  valid: ['publish', 'list', 'retire', 'mode'].includes(command ?? '') && (!needsArgument || !!argument),
});
