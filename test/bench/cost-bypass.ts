/**
 * Issue 20, item 1 (for `npm run bench:abuse`): the cost-bypass document, `aliases` copies of four
 * nested booking lists without `first` over one vehicle with 20 bookings (20^4 bookings per alias
 * if executed). Prints the answer's status, code and size, its time, and /healthz (sampled every
 * 5 ms) while it runs: the slowest /healthz answer is the event loop's longest block.
 */
import { percentile } from './args.ts';

const VIN = '1HGCM82633A0C0575';
const BOOKINGS = 20;
const NEST = 'bookings { nodes { bookingId vehicle { bookings { nodes { bookingId vehicle { bookings { nodes { bookingId vehicle { bookings { nodes { bookingId } } } } } } } } } } }';

const round = (v: number) => Math.round(v * 10) / 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function graphql(base: string, token: string, query: string) {
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query }) });
  const text = await res.text();
  return { status: res.status, text };
}

/** A vehicle with BOOKINGS bookings (none overlapping); an existing vehicle from an earlier run is fine. */
async function seed(base: string, token: string) {
  await graphql(base, token, `mutation { createVehicle(vin: "${VIN}", deviceId: "356938035643811") { vin } }`);
  const starts = Array.from({ length: BOOKINGS }, (_, i) => {
    const start = 1_900_000_000 + i * 1000;
    return `b${i}: startBooking(input: { vin: "${VIN}", startTimestamp: ${start}, estimatedEndTimestamp: ${start + 500} }) { bookingId }`;
  });
  await graphql(base, token, `mutation { ${starts.join(' ')} }`);
}

export async function costBypass(base: string, token: string, aliases: number) {
  await seed(base, token);
  const query = `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: ${NEST.replace('bookings {', `bookings(filter: { vin: "${VIN}" }) {`)}`).join(' ')} }`;
  const health: number[] = [];
  let running = true;
  const sampler = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer(), () => undefined);
      health.push(performance.now() - t0);
      await sleep(5);
    }
  })();
  const t0 = performance.now();
  const answer = await graphql(base, token, query);
  const ms = round(performance.now() - t0);
  running = false;
  await sampler;
  let code: string;
  try { code = (JSON.parse(answer.text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code ?? 'OK'; } catch { code = 'unparsable'; }
  const result = {
    aliases, status: answer.status, code, answerBytes: Buffer.byteLength(answer.text), ms,
    healthz: { samples: health.length, p50: round(percentile(health, 50)), p99: round(percentile(health, 99)), max: round(Math.max(...health)) },
  };
  console.log(`cost bypass, ${aliases} aliases of four nested lists without first: ${result.status} ${code}, ${result.answerBytes >= 1e5 ? `${(result.answerBytes / 1e6).toFixed(2)} MB` : `${result.answerBytes} bytes`} in ${ms} ms; /healthz meanwhile p50 ${result.healthz.p50} ms, p99 ${result.healthz.p99} ms, max (event-loop block) ${result.healthz.max} ms`);
  return result;
}
