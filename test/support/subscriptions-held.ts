/**
 * The subscriptions a gateway holds, read from its /metrics (`gateway_subscriptions_active`): for a
 * gateway in another process (test/support/child-server.ts), or seen as a client sees it.
 */

/** The subscriptions the gateway at `base` holds now, over every transport. */
export async function subscriptionsHeld(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return [...text.matchAll(/^gateway_subscriptions_active(?:\{[^}]*\})? (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * Waits until the gateway at `base` holds at least `count` subscriptions: an event committed after
 * that reaches them (one committed while a subscription is still starting may not).
 */
export async function untilHeld(base: string, count: number, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  while ((await subscriptionsHeld(base)) < count) {
    if (Date.now() - started > timeoutMs) throw new Error(`${base} did not hold ${count} subscriptions within ${timeoutMs} ms (holds ${await subscriptionsHeld(base)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
