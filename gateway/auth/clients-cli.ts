/**
 * Manages API clients in the gateway's database (the same DATABASE_URL / DATA_DIR as the server).
 *   npm run clients -- create --org <org> --scopes b2b,roadside   prints {clientId, clientSecret, ...} as JSON
 *   npm run clients -- list
 *   npm run clients -- rotate <clientId>                           prints the new secret as JSON
 *   npm run clients -- disable <clientId> | enable <clientId>
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase } from '../../subgraphs/platform/db/orm.ts';
import { GATEWAY_MIGRATIONS } from '../stack.ts';
import { Client, ClientStore, parseScopes } from './clients.ts';

const usage = 'Usage: npm run clients -- create --org <org> --scopes b2b,roadside | list | rotate <clientId> | disable <clientId> | enable <clientId>';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { org: { type: 'string' }, scopes: { type: 'string', default: 'b2b,roadside' } },
});
const [command, clientId] = positionals;
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const db = await openDatabase(config, { name: 'platform', entities: [Client], migrationsPath: GATEWAY_MIGRATIONS });
const store = new ClientStore(db.orm.em);
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
let exitCode = 0;
try {
  switch (command) {
    case 'create':
      if (!values.org) throw new Error('--org is required');
      print(await store.create(values.org, parseScopes(values.scopes)));
      break;
    case 'list':
      print(await store.list());
      break;
    case 'rotate':
      if (!clientId) throw new Error('rotate needs a clientId');
      print(await store.rotate(clientId));
      break;
    case 'disable': case 'enable':
      if (!clientId) throw new Error(`${command} needs a clientId`);
      await store.setDisabled(clientId, command === 'disable');
      print({ clientId, disabled: command === 'disable' });
      break;
    default:
      console.error(usage);
      exitCode = 2;
  }
} catch (error) {
  console.error((error as Error).message);
  exitCode = 1;
} finally {
  await db.close();
}
process.exit(exitCode);
