import { connect } from 'node:net';
import type { Config } from '../../subgraphs/platform/config.ts';
import type { OrmOptions } from '../../subgraphs/platform/db/orm.ts';
import { refuseCleanly, StartRefused } from '../../subgraphs/platform/start-refused.ts';
import { TOKEN_PATH } from '../auth/token-route.ts';

/** The operator client's credentials as a CLI is given them (flags win; an empty variable counts as unset, as in loadConfig). */
export interface OperatorFlags { 'client-id'?: string; 'client-secret'?: string }

/** How long the CLI waits for a connection to `--url`, and then for its /healthz. */
const CONNECT_TIMEOUT_MS = 2_000;
const HEALTH_TIMEOUT_MS = 5_000;

/** Whether the connection was refused: nothing listens (every address tried, for a name with several). */
const refused = (error: NodeJS.ErrnoException): boolean =>
  error.code === 'ECONNREFUSED' || (error instanceof AggregateError && error.errors.length > 0 && error.errors.every((e) => refused(e as NodeJS.ErrnoException)));

/** Whether anything listens at `base`'s host and port: false only when the connection is refused. */
function listens(base: string): Promise<boolean> {
  const { hostname, port, protocol } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || (protocol === 'https:' ? 443 : 80)), timeout: CONNECT_TIMEOUT_MS });
    const done = (outcome: () => void) => { socket.destroy(); outcome(); };
    socket.once('connect', () => done(() => resolve(true)));
    socket.once('timeout', () => done(() => reject(new Error(`no connection to ${base} within ${CONNECT_TIMEOUT_MS / 1000} s`))));
    socket.once('error', (error: NodeJS.ErrnoException) => done(() => (refused(error) ? resolve(false) : reject(new Error(`${base}: ${error.code ?? error.message}`)))));
  });
}

/**
 * Whether a gateway runs at `base`: true when its /healthz answers 200, false only when nothing
 * listens there (the connection is refused). Anything else (no connection or no answer in time, an
 * answer other than 200) throws: a slow or unwell gateway is still running, and a CLI that opened
 * its own database instead might write to another one than the gateway serves.
 */
export async function gatewayRuns(base: string): Promise<boolean> {
  const unsure = (why: string) => new Error(`${why}. Nothing was changed: the CLI opens the database itself only when nothing listens at ` +
    `${base} (a running gateway may serve another database than this CLI's DATABASE_URL / DATA_DIR). Retry when the gateway answers, or pass the address of one that does with --url.`);
  let listening: boolean;
  try {
    listening = await listens(base);
  } catch (error) {
    throw unsure(`Cannot tell whether a gateway runs at ${base} (${(error as Error).message})`);
  }
  if (!listening) return false;
  const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) }).catch((error: Error) => {
    throw unsure(`Something listens at ${base} but its /healthz did not answer${error.name === 'TimeoutError' ? ` within ${HEALTH_TIMEOUT_MS / 1000} s` : ` (${String((error.cause as Error | undefined)?.message ?? error.message)})`}`);
  });
  await health.body?.cancel();
  if (!health.ok) throw unsure(`Something listens at ${base} but its /healthz answered ${health.status}`);
  return true;
}

export type AdminCall = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

/**
 * Calls of the admin API of the gateway at `url` with an operator token (scope admin): the client of
 * --client-id/--client-secret, else ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET, else the bootstrap client,
 * else the development client's CLIENT_ID / CLIENT_SECRET as the start prints them.
 */
export async function adminApi(url: string, config: Config, flags: OperatorFlags): Promise<AdminCall> {
  const id = flags['client-id'] || process.env.ADMIN_CLIENT_ID || config.BOOTSTRAP_CLIENT_ID || process.env.CLIENT_ID;
  const secret = flags['client-secret'] || process.env.ADMIN_CLIENT_SECRET || config.BOOTSTRAP_CLIENT_SECRET || process.env.CLIENT_SECRET;
  if (!id || !secret) {
    throw new Error(`A gateway answers at ${url}: changes go through its admin API, which needs an operator client (scope admin: the bootstrap client, or the development client printed on first start). ` +
      'Pass --client-id and --client-secret (or set ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET, or paste the development client\'s export CLIENT_ID=... CLIENT_SECRET=... line).');
  }
  const tokenResponse = await fetch(`${url}${TOKEN_PATH}`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret, scope: 'admin' }) });
  const token = await tokenResponse.json() as { access_token?: string; error_description?: string };
  if (!token.access_token) throw new Error(`The gateway at ${url} refused the operator client '${id}': ${token.error_description ?? tokenResponse.status}`);
  return async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method, headers: { authorization: `Bearer ${token.access_token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    const result = await response.json() as Record<string, unknown>;
    if (!response.ok) throw new Error(`${response.status} ${String(result.detail ?? JSON.stringify(result))}`);
    return result;
  };
}

/** The options every admin CLI takes besides its own: where the gateway answers and the operator client. */
export const ADMIN_OPTIONS = {
  url: { type: 'string' }, 'client-id': { type: 'string' }, 'client-secret': { type: 'string' },
} as const;
export const ADMIN_USAGE = '  [--url http://127.0.0.1:4000] [--client-id <operator client> --client-secret <its secret>]';

/** What a command runs on: the gateway's admin API or the database; `close` releases either. */
export interface AdminOperations { close(): Promise<void> }

export interface AdminCommand<O extends AdminOperations> {
  /** The gateway's address, --url or http://127.0.0.1:$PORT, without a trailing slash. */
  url: string;
  /** The command line is complete; otherwise `usage` is printed and the exit code is 2. */
  valid: boolean;
  usage: string;
  throughServer: () => Promise<O>;
  /** The database, when nothing listens at `url` (connection refused); without it that is an error. */
  direct?: () => Promise<O>;
  run: (operations: O) => Promise<unknown>;
}

/** The gateway's address the CLI talks to. */
export const adminUrl = (flag: string | undefined, config: Config) => (flag ?? `http://127.0.0.1:${config.PORT}`).replace(/\/+$/, '');

/**
 * Runs one admin CLI command and ends the process: checks the command line (exit 2), opens its
 * operations through the gateway answering at `url`, or directly only when nothing listens there
 * (gatewayRuns; a StartRefused ends with its message), runs, prints the result as JSON; any error is
 * printed alone (exit 1).
 */
export async function runAdminCommand<O extends AdminOperations>(command: AdminCommand<O>): Promise<never> {
  if (!command.valid) {
    console.error(command.usage);
    process.exit(2);
  }
  const { url, throughServer, direct } = command;
  const open = async () => {
    if (await gatewayRuns(url)) return throughServer();
    if (direct) return direct();
    throw new Error(`Nothing listens at ${url}: start the gateway, or pass its address with --url`);
  };
  const operations = await refuseCleanly(open).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
  let exitCode = 0;
  try {
    process.stdout.write(`${JSON.stringify(await command.run(operations), null, 2)}\n`);
  } catch (error) {
    console.error((error as Error).message);
    exitCode = 1;
  } finally {
    await operations.close();
  }
  process.exit(exitCode);
}

/**
 * Opens the database for a CLI's direct path; a refusal (the data folder held by a running server)
 * says that no gateway answered at `url`.
 */
export async function openDirect(config: Config, url: string, spec: OrmOptions) {
  const { openDatabase } = await import('../../subgraphs/platform/db/orm.ts');
  return openDatabase(config, spec).catch((error: unknown) => {
    if (error instanceof StartRefused) {
      throw new StartRefused(`no gateway answered at ${url}, and ${error.message} ` +
        'If that process is a gateway listening elsewhere, pass its address with --url.');
    }
    throw error;
  });
}
