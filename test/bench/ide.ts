/**
 * `npx node test/bench/ide.ts [-- --loads=5]`
 *
 * The IDE page at GET /graphql in the project's Chromium, against a gateway child process started as
 * `npm start` starts it: for each load, in a fresh browser context (nothing cached), the bytes
 * transferred (compressed, as sent) and the time from navigation until GraphiQL is interactive (the
 * query editor shows the first example and the execute button is enabled). Prints the median and each run.
 */
import type { CDPSession } from 'playwright-core';
import { launchBrowser } from '../support/browser.ts';
import { startChildServer } from '../support/child-server.ts';
import { flag } from './args.ts';

const LOADS = Math.round(flag('loads', 5, 50));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Sums the encoded (on the wire) length of every response the page loads. */
async function countBytes(session: CDPSession) {
  let bytes = 0;
  await session.send('Network.enable');
  session.on('Network.loadingFinished', (event) => { bytes += event.encodedDataLength; });
  return () => bytes;
}

const server = await startChildServer({ LOG_LEVEL: 'warn' });
const browser = await launchBrowser();
const runs: { bytes: number; ms: number; requests: number }[] = [];
try {
  for (let i = 0; i < LOADS; i += 1) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    let requests = 0;
    page.on('request', () => { requests += 1; });
    const bytes = await countBytes(await context.newCDPSession(page));
    const started = performance.now();
    await page.goto(`${server.base}/graphql`);
    await page.locator('.graphiql-query-editor').getByText('query', { exact: false }).first().waitFor({ timeout: 60_000 });
    await page.locator('.graphiql-execute-button:enabled').waitFor({ timeout: 60_000 });
    const ms = performance.now() - started;
    // Monaco starts its workers as the editors open: counted too.
    await page.waitForTimeout(2000);
    runs.push({ bytes: bytes(), ms, requests });
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
}
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`IDE page, ${LOADS} cold loads: median ${kib(median(runs.map((r) => r.bytes)))} transferred, `
  + `${Math.round(median(runs.map((r) => r.ms)))} ms to interactive, ${median(runs.map((r) => r.requests))} requests`);
for (const run of runs) console.log(`  ${kib(run.bytes)}  ${Math.round(run.ms)} ms  ${run.requests} requests`);
