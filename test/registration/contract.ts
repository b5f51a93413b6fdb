import { OpenApiContract } from '../../gateway/docs/contract.ts';
import type { TestStack } from '../support/stack.ts';

interface Call { method: string; url: string; status: number; contentType: string | null; body: unknown }

/** Records every response under `prefix`, so a test file can check them all against /openapi.json at the end. */
export function recordCalls(t: TestStack, prefix: string): Call[] {
  const calls: Call[] = [];
  const original = t.request.bind(t);
  t.request = (async (method: string, url: string, options?: Parameters<TestStack['request']>[2]) => {
    const res = await original(method, url, options);
    if (url.startsWith(prefix)) calls.push({ method, url, status: res.status, contentType: res.headers.get('content-type'), body: res.body });
    return res;
  }) as TestStack['request'];
  return calls;
}

/** Why recorded responses break the OpenAPI document (empty when none does). */
export async function contractViolations(t: TestStack, calls: Call[]): Promise<string[]> {
  const doc = (await t.request('GET', '/openapi.json')).body;
  const contract = new OpenApiContract(doc);
  // 414 (URI too long) comes from the gateway's own URL limit, before any route; the fuzz test provokes it.
  return calls.filter((c) => c.status !== 414).flatMap((c) => contract.check(c.method, c.url, c.status, c.contentType, c.body === '' ? undefined : c.body));
}
