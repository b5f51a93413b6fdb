/**
 * How many objects `value` holds (JSON objects at any depth, the root included), counting no further than
 * `max + 1`. Walks without recursion and stops as soon as the count passes `max`, so an oversized answer
 * costs at most `max` steps to refuse.
 */
export function countObjects(value: unknown, max: number): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length) {
    const current = pending.pop();
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (const item of current) if (item !== null && typeof item === 'object') pending.push(item);
      continue;
    }
    count += 1;
    if (count > max) return count;
    for (const key in current) {
      const item = (current as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return count;
}

/** True when `value` holds more than `max` objects (see countObjects). */
export const holdsMoreObjectsThan = (value: unknown, max: number): boolean => countObjects(value, max) > max;
