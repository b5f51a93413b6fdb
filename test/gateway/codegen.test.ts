import { afterAll, beforeAll, expect, it } from 'vitest';
import { ideExamples } from '../../gateway/ide/examples.ts';
import type { RiskIndexQuery, ScoringCreateUserMutation, ScoringUserQuery } from '../../gateway/ide/operations.generated.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring', 'risk'] }); }, 300_000);
afterAll(async () => { await t?.close(); });

const example = (name: string) => {
  const found = ideExamples.find((e) => new RegExp(`(query|mutation) ${name}\\b`).test(e.query));
  if (!found) throw new Error(`no example ${name}`);
  return found;
};

/** The generated types describe what the gateway really answers for the documented examples. */
it('types the example operations as the gateway answers them', async () => {
  const create = await t.graphql<ScoringCreateUserMutation>(example('ScoringCreateUser').query, example('ScoringCreateUser').variables);
  expect(create.errors).toBeUndefined();
  const created: ScoringCreateUserMutation = create.data!;
  const read = await t.graphql<ScoringUserQuery>(example('ScoringUser').query, { userId: created.createUser.userId });
  const user: ScoringUserQuery['user'] = read.data!.user;
  expect(Object.keys(user!).sort()).toEqual(['createdAt', 'enrollmentStatus', 'homeZip', 'id', 'userId']);
  expect(user!.id).toBe(`User:${created.createUser.userId}`);
  expect(['ACCEPTED', 'PENDING', 'REJECTED']).toContain(user!.enrollmentStatus);

  const risk = await t.graphql<RiskIndexQuery>(example('RiskIndex').query, example('RiskIndex').variables, null);
  expect(risk.errors).toBeUndefined();
  const report: RiskIndexQuery['riskIndex'] = risk.data!.riskIndex;
  expect(report.area.states).toEqual(['IL']);
  expect(typeof report.accidentSummary.total).toBe('number');
});
