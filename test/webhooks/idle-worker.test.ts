import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['webhooks'], env: { WEBHOOK_POLL_INTERVAL_MS: '50' } });
}, 300_000);
afterAll(async () => { await t?.close(); });

// The claim plans a statement of windows and joins each time: 6 ms on PGlite, up to 19 ms, and every
// request's statement waits meanwhile. A retry coming due is still claimed on the timer (delivery.test.ts).
it('an idle delivery worker polls with one probe of the due deliveries, not the claim', async () => {
  const connection = t.stack.subgraphs.find((s) => s.name === 'webhooks')!.db.orm.em.getConnection();
  const execute = vi.spyOn(connection, 'execute');
  try {
    await new Promise((r) => setTimeout(r, 600));
    const statements = execute.mock.calls.map(([sql]) => String(sql))
      .filter((sql) => sql.includes('"webhooks"."webhook_deliveries"'));
    expect(statements.length).toBeGreaterThanOrEqual(5);
    expect(statements.every((sql) => sql.startsWith('select exists'))).toBe(true);
  } finally {
    execute.mockRestore();
  }
});
