import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MvrKeyring, registerKeyring, keyringFor } from '../../subgraphs/scoring/mvr/crypto.ts';
import { ReportVault } from '../../subgraphs/platform/crypto/vault.ts';
import { adoptKeyring, makeCurrent, recordsByKey, reencryptBatch } from '../../subgraphs/scoring/mvr/keyring-db.ts';
import { StartRefused } from '../../subgraphs/platform/start-refused.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { sourceBFull } from './mvr-fixtures.ts';

let t: TestStack;
const scoring = () => t.stack.subgraphs.find((s) => s.name === 'scoring')!;
const createMvr = () => t.graphql('mutation($r: JSON) { createMvr(userId: "key-user", source: SOURCE_B, report: $r) { id } }', { r: sourceBFull() });
const reports = async () => {
  const res = await t.graphql('{ user(userId: "key-user") { mvrRecords { id report } } }');
  expect(res.errors).toBeUndefined();
  return (res.data.user.mvrRecords as { report: string }[]).map((r) => r.report);
};

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring'] });
  await t.graphql('mutation { createUser(input: { userId: "key-user" }) { userId } }');
}, 240_000);
afterAll(async () => { await t?.close(); });

describe('MVR keys recorded in the database', () => {
  it('refuses a process whose key is not the database\'s, saying which keys differ', async () => {
    expect((await createMvr()).errors).toBeUndefined();
    const current = keyringFor(scoring().db.orm.em).preferred;
    const other = new MvrKeyring(new ReportVault(randomBytes(32)));
    const refusal = await adoptKeyring(scoring().db.orm.em.fork(), other).then(() => null, (e: unknown) => e);
    expect(refusal).toBeInstanceOf(StartRefused);
    expect((refusal as Error).message).toContain(`written with key ${current.keyId}`);
    expect((refusal as Error).message).toContain(other.preferred.keyId);
    expect((refusal as Error).message).toMatch(/MVR_ENCRYPTION_KEY/);
    await expect(adoptKeyring(scoring().db.orm.em.fork(), keyringFor(scoring().db.orm.em))).resolves.toBeUndefined();
  });

  it('rotates: the new key writes, the old one still reads, and re-encryption in batches moves every record', async () => {
    const em = scoring().db.orm.em;
    const old = keyringFor(em).preferred;
    expect((await createMvr()).errors).toBeUndefined();
    const before = await reports();
    expect(before.length).toBeGreaterThanOrEqual(2);

    const fresh = new ReportVault(randomBytes(32));
    const ring = new MvrKeyring(fresh, [old]);
    await adoptKeyring(em.fork(), ring); // the database's key is in the ring: accepted, still writing with the old key
    registerKeyring(em, ring); // the process restarted with both keys
    expect((await createMvr()).errors).toBeUndefined();
    expect(await recordsByKey(em.fork())).toEqual({ [old.keyId]: before.length + 1 });

    await makeCurrent(em.fork(), fresh);
    expect((await createMvr()).errors).toBeUndefined();
    expect((await recordsByKey(em.fork()))[fresh.keyId]).toBe(1);
    let batches = 0;
    while (await reencryptBatch(em, ring, fresh, 1) > 0) batches += 1;
    expect(batches).toBe(before.length + 1);
    expect(await recordsByKey(em.fork())).toEqual({ [fresh.keyId]: before.length + 2 });
    expect((await reports()).slice(0, before.length).sort()).toEqual([...before].sort());

    // Once done the old key can go; a process holding only the old one is refused.
    await expect(adoptKeyring(em.fork(), new MvrKeyring(fresh))).resolves.toBeUndefined();
    await expect(adoptKeyring(em.fork(), new MvrKeyring(old))).rejects.toBeInstanceOf(StartRefused);
  });
});
