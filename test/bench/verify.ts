import { firstDifference } from './answers.ts';
import type { Measurement } from './scenarios.ts';

/** How many requests of a workload's drawn sequence are also compared with our gateway's answers. */
const DRAWN_SAMPLE = 40;

async function answer(url: string, method: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  try { return { status: response.status, body: JSON.parse(text) as unknown }; } catch { return { status: response.status, body: text as unknown }; }
}

/**
 * One request first: a wrong answer is reported, not measured. A measurement with `compareWith`
 * (another gateway than ours) must also answer exactly what our gateway answers to the same request;
 * for a workload, every kind of request and a sample of the drawn ones.
 */
export async function verify(m: Measurement, headersFor: (m: Measurement) => Record<string, string>): Promise<{ problem: string | null; note?: string }> {
  if (m.mix) {
    const drawn = m.compareWith ? Array.from({ length: DRAWN_SAMPLE }, m.mix.connection(0)) : [];
    for (const request of [...m.mix.each(), ...drawn]) {
      const one = { ...m, mix: undefined, url: `${m.url}${request.path}`, method: request.method, body: request.body, compareWith: m.compareWith && `${m.compareWith}${request.path}` };
      const { problem } = await verify(one, headersFor);
      if (problem) return { problem: `${request.kind}: ${problem}` };
    }
    return { problem: null };
  }
  try {
    const headers = headersFor(m);
    const theirs = await answer(m.url, m.method, headers, m.body);
    const problem = m.check(theirs.status, theirs.body);
    if (problem || !m.compareWith) return { problem, note: m.describe?.(theirs.body) };
    const ours = await answer(m.compareWith, m.method, headers, m.body);
    const difference = firstDifference(ours.body, theirs.body);
    return { problem: difference && `answer differs from our gateway's (ours vs theirs) at ${difference}`, note: m.describe?.(theirs.body) };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}
