import { OpenApiContract } from './openapi.ts';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { restRoutes } from '../../gateway/rest/index.ts';

/** Every REST response any test receives is checked against the OpenAPI document (open, as published; test/rest/conformance.test.ts walks it strictly). */
const contract = OpenApiContract.of(buildOpenApi(restRoutes));

export interface HttpResult<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions { token?: string | null; body?: unknown; headers?: Record<string, string>; form?: Record<string, string>; signal?: AbortSignal }

export type Request = <T = any>(method: string, path: string, options?: RequestOptions) => Promise<HttpResult<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Calls the gateway at `base()`, checking each REST response against /openapi.json (`contract` keeps the count and what broke it). */
export function gatewayClient(base: () => string) {
  const violations: string[] = [];
  const checked = { count: 0 };

  async function request(method: string, path: string, opts: RequestOptions = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.form) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(opts.form).toString();
    } else if (opts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    const response = await fetch(`${base()}${path}`, { method, headers, body, signal: opts.signal });
    const text = await response.text();
    let parsed: unknown = text;
    if (/json/.test(response.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    const documented = await contract;
    if (documented.find(method, path)) {
      checked.count += 1;
      violations.push(...documented.check(method, path, { status: response.status, headers: response.headers, body: parsed }));
    }
    return { status: response.status, headers: response.headers, body: parsed as never };
  }

  return {
    request: request as Request,
    async tokenFor(clientId: string, clientSecret: string) {
      const res = await request('POST', '/platform/oauth/v1/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
      if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { access_token: string }).access_token;
    },
    contract: { get checked() { return checked.count; }, violations },
  };
}
