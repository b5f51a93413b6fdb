/**
 * The other organisation's reads of the hostile scenario (subscriptions-fan-out.ts), in a worker
 * thread: timed on an event loop of their own, which the tenant's results (15 MB of JSON arriving on
 * the bench's main thread) do not hold up. Says 'reading' after one GET not counted, then one GET
 * every 50 ms until told to stop, and at least `min`; then posts the times and statuses.
 */
import { parentPort, workerData } from 'node:worker_threads';

export interface ReadsTask { url: string; token: string; min: number }
export interface Reads { times: number[]; statuses: Record<number, number> }

const { url, token, min } = workerData as ReadsTask;
let stopping = false;
parentPort!.once('message', () => { stopping = true; });
const reads: Reads = { times: [], statuses: {} };
/** One GET, its answer read whole; its status. */
const get = async () => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
};
// One read not counted: a new thread's first fetch loads its HTTP client and opens the connection
// (70-85 ms here), the reader's own start, which would be the slowest read of every series.
await get();
parentPort!.postMessage('reading');
while (reads.times.length < min || !stopping) {
  const started = performance.now();
  const status = await get();
  reads.times.push(performance.now() - started);
  reads.statuses[status] = (reads.statuses[status] ?? 0) + 1;
  await new Promise((r) => setTimeout(r, 50));
}
parentPort!.postMessage(reads);
