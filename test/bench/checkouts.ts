/**
 * `npx node test/bench/checkouts.ts <checkout A> <checkout B>` (AB_ROUNDS, AB_N, AB_LOG_LEVEL, AB_COLLAPSE=off; DATABASE_URL)
 *
 * CPU per request of two checkouts of this repository in ONE process, rounds alternated (ABBA), so
 * that a busy machine's load weighs on both alike: a cut measured before/after where two bench runs
 * differ by more than the cut. Each checkout builds its own in-process stack (own database), seeds a
 * user with bookings, then runs the REST user lookup, the GraphQL user query and the cross query
 * through `app.inject` (no sockets: Node's HTTP work is not measured), 8 at a time. A checkout made
 * with `git archive <commit> | tar -x -C <dir>` needs `node_modules` linked to this one's.
 * Prints the median CPU µs per request of each and the median of the paired round ratios B/A.
 */
import type { TestStack } from '../support/stack.ts';
import { SERVER_ENV } from './protocol.ts';

interface Checkout { root: string; t: TestStack; app: TestStack['stack']['gateway']['app'] }

const roots = process.argv.slice(2);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 30), N = Number(process.env.AB_N ?? 64);
const env = { NODE_ENV: 'production', LOG_LEVEL: process.env.AB_LOG_LEVEL ?? 'warn', REQUEST_COLLAPSING: String(process.env.AB_COLLAPSE !== 'off') };
// The stacks load below, in this process: as in the bench's server process (protocol.ts).
Object.assign(process.env, SERVER_ENV);
const stacks: Checkout[] = [];
for (const root of roots) {
  const { startTestStack } = await import(`${root}/test/support/stack.ts`);
  const t = await (startTestStack as (options: { env: Record<string, string> }) => Promise<TestStack>)({ env });
  const userId = 'ab-user';
  const must = (r: { errors?: unknown }) => { if (r.errors) throw new Error(JSON.stringify(r.errors)); };
  must(await t.graphql('mutation($input: CreateUserInput) { createUser(input: $input) { userId } }', { input: { userId, dateOfBirth: '1985-04-12', homeZip: '60601' } }));
  for (let i = 0; i < 5; i++) {
    const vin = `1HGCM82633A00${String(4000 + i)}`;
    must(await t.graphql('mutation($vin: VIN!, $device: ID) { createVehicle(vin: $vin, deviceId: $device) { vin } }', { vin, device: `35${String(i).padStart(13, '0')}` }));
    const s = Math.floor(Date.UTC(2026, 0, 1) / 1000) + i * 86400;
    const started = await t.graphql('mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId } }', { input: { vin, userId, startTimestamp: s, estimatedEndTimestamp: s + 3600 } });
    must(started);
    must(await t.graphql('mutation($id: ID!, $end: EpochSeconds!) { endBooking(bookingId: $id, actualEndTimestamp: $end) { bookingId } }', { id: started.data.startBooking.bookingId, end: s + 1800 }));
  }
  stacks.push({ root, t, app: t.stack.gateway.app });
}
// Background loads (the Risk Index data) would be measured with whichever stack runs meanwhile.
for (let i = 0; i < 600 && stacks.some((s) => s.t.stack.subgraphs.some((g) => g.pending())); i++) await new Promise((r) => setTimeout(r, 500));
console.log('ready', stacks.map((s) => s.t.stack.subgraphs.map((g) => g.pending()).filter(Boolean)));
const headers = (t: { token: string }) => ({ authorization: `Bearer ${t.token}`, 'content-type': 'application/json' });
const scenarios: Record<string, (s: Checkout) => Promise<{ statusCode: number; body: string }>> = {
  rest: (s) => s.app.inject({ method: 'GET', url: '/shared-mobility-insights/v2/users/ab-user', headers: headers(s.t) }),
  user: (s) => s.app.inject({ method: 'POST', url: '/graphql', headers: headers(s.t), payload: { query: 'query BenchUser($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus } }', variables: { id: 'ab-user' } } }),
  cross: (s) => s.app.inject({ method: 'POST', url: '/graphql', headers: headers(s.t), payload: { query: 'query BenchUserBookings($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus bookings(first: 20) { nodes { bookingId startTimestamp status vehicle { vin deviceId } } } } }', variables: { id: 'ab-user' } } }),
};
async function round(s: Checkout, run: (s: Checkout) => Promise<{ statusCode: number; body: string }>) {
  const start = process.cpuUsage();
  for (let i = 0; i < N; i += 8) {
    const rs = await Promise.all(Array.from({ length: 8 }, () => run(s)));
    for (const r of rs) if (r.statusCode !== 200 || r.body.includes('"errors"')) throw new Error(`${s.root}: ${r.statusCode} ${r.body.slice(0, 300)}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / N;
}
for (const [name, run] of Object.entries(scenarios)) {
  for (const s of stacks) await round(s, run); // warm-up
  const per = stacks.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...stacks.entries()].reverse() : [...stacks.entries()];
    for (const [i, s] of order) per[i].push(await round(s, run));
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const pairs = per[0].map((a, r) => (per[1] ?? per[0])[r] / a);
  console.log(name.padEnd(6), `median of paired ratios ${med(pairs).toFixed(3)};`, stacks.map((s, i) => `${s.root.split('/').pop()}: median ${med(per[i]).toFixed(0)} µs/req mean ${(per[i].reduce((a, b) => a + b, 0) / per[i].length).toFixed(0)}`).join(' | '), `ratio ${(med(per[1] ?? per[0]) / med(per[0])).toFixed(3)}`);
}
for (const s of stacks) await s.t.close();
