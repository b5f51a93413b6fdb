/**
 * `node test/bench/input-cost.ts [--runs=5]`
 *
 * Whether the largest MVR reports and provider file uploads need the worker pool: starts a stack
 * (scoring and roadside, in this process, on a fresh database) and sends max-size requests: a 1 MB
 * MVR of each source (the gateway's body limit) and a 1 MB invalid one, through REST and GraphQL,
 * and a 512 KiB file as base64 JSON and as multipart. For each: the answer time and the longest
 * time the event loop was blocked meanwhile (monitorEventLoopDelay), median of `runs`. Work that
 * blocks the loop for more than ~50 ms belongs in a worker pool (subgraphs/platform/worker-pool.ts).
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sourceAFull, sourceBFull } from '../scoring/mvr-fixtures.ts';
import { provision, roadsideToken, RS } from '../roadside/helpers.ts';
import { startTestStack } from '../support/stack.ts';

const arg = process.argv.find((a) => a.startsWith('--runs='));
const RUNS = Math.min(20, Math.max(1, Number(arg?.split('=')[1] ?? 5)));
const MAX_BODY = 1_000_000;
const USERS = '/shared-mobility-insights/v2/users';

/** The report with its list grown until the text is just under the body limit. */
const grow = <T extends object>(report: T, list: Record<string, unknown>[]) => {
  const item = list[0];
  const room = MAX_BODY - 2_000 - JSON.stringify(report).length;
  const count = Math.floor(room / (JSON.stringify(item).length + 1));
  for (let i = 0; i < count; i++) list.push({ ...item });
  return report;
};
const a = sourceAFull();
const textA = JSON.stringify(grow(a, a.violations));
const b = sourceBFull();
const textB = JSON.stringify(grow(b, b.events));
const bad = sourceAFull();
grow(bad, bad.violations);
// Wrong types make every item longer: keep 85% of them to stay under the body limit.
const textBad = JSON.stringify({ ...bad, violations: bad.violations.slice(0, Math.floor(bad.violations.length * 0.85)).map((v) => ({ ...v, points: 'many', violation_date: 'yesterday' })) });

const t = await startTestStack({ subgraphs: ['scoring', 'roadside'] });
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const rows: { request: string; status: number; bytes: number; answerMs: number; loopBlockedMs: number }[] = [];

async function measure(name: string, bytes: number, send: () => Promise<{ status: number }>) {
  const answers: number[] = [];
  const blocked: number[] = [];
  let status = 0;
  for (let i = 0; i < RUNS + 1; i++) {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    const t0 = performance.now();
    status = (await send()).status;
    const ms = performance.now() - t0;
    histogram.disable();
    // The first run warms up (schema compilation, JIT); not counted.
    if (i > 0) { answers.push(ms); blocked.push(histogram.max / 1e6); }
  }
  const row = { request: name, status, bytes, answerMs: Math.round(median(answers) * 10) / 10, loopBlockedMs: Math.round(median(blocked) * 10) / 10 };
  rows.push(row);
  console.log(`${name}: ${status}, ${bytes} bytes, answer ${row.answerMs} ms, event loop blocked at most ${row.loopBlockedMs} ms (medians of ${RUNS})`);
}

try {
  if ((await t.request('POST', USERS, { token: t.token, body: { userId: 'big-mvr', dateOfBirth: '1980-04-05', homeZip: '60601' } })).status !== 201) throw new Error('user not created');
  const post = (segment: string, text: string) => t.request('POST', `${USERS}/big-mvr/${segment}`, { token: t.token, body: text, headers: { 'content-type': 'application/json' } });
  await measure('REST Source A MVR, 1 MB', textA.length, () => post('sourcea-mvr', textA));
  await measure('REST Source B MVR, 1 MB', textB.length, () => post('sourceb-mvr', textB));
  await measure('REST invalid Source A MVR, every violation wrong', textBad.length, () => post('sourcea-mvr', textBad));
  const mutation = 'mutation($id: ID!, $report: JSON!) { createMvr(userId: $id, source: SOURCE_A, report: $report) { id } }';
  const gqlBody = JSON.stringify({ query: mutation, variables: { id: 'big-mvr', report: JSON.parse(textA) } });
  await measure('GraphQL Source A MVR, 1 MB', gqlBody.length, () => t.request('POST', '/graphql', { token: t.token, body: gqlBody }));

  const token = (await roadsideToken(t)).body.access_token as string;
  const member = await provision(t, token);
  const file = randomBytes(512 * 1024);
  const json = JSON.stringify({ memberId: member.memberId, fileType: 'PHOTO', fileName: 'big.jpg', contentType: 'image/jpeg', content: file.toString('base64') });
  await measure('upload 512 KiB as base64 JSON', json.length, () => t.request('POST', `${RS}/provider/fileservice/upload`, { token, body: json }));
  await measure('upload 512 KiB as multipart', file.length, async () => {
    const form = new FormData();
    form.append('memberId', member.memberId);
    form.append('fileType', 'PHOTO');
    form.append('file', new Blob([file], { type: 'image/jpeg' }), 'big.jpg');
    const res = await fetch(`${t.url}${RS}/provider/fileservice/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    await res.arrayBuffer();
    return res;
  });
} finally {
  await t.close();
}
console.log(JSON.stringify(rows));
