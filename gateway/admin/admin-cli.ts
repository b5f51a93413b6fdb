import type { Config } from '../../subgraphs/platform/config.ts';
import { TOKEN_PATH } from '../auth/token-route.ts';

/** The operator client's credentials as a CLI is given them (flags win; an empty variable counts as unset, as in loadConfig). */
export interface OperatorFlags { 'client-id'?: string; 'client-secret'?: string }

/** Whether a gateway answers at `base`. */
export const gatewayAnswers = (base: string) => fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false);

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
