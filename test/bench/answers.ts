/**
 * Where two JSON answers first differ, as `path: ours vs theirs` (null when they are equal). Object
 * keys in another order are equal (a JSON answer's meaning does not depend on it); arrays are compared
 * in order.
 */
export function firstDifference(ours: unknown, theirs: unknown, path = '$'): string | null {
  if (Object.is(ours, theirs)) return null;
  const show = (value: unknown) => (value === undefined ? 'absent' : JSON.stringify(value).slice(0, 120));
  const differ = `${path}: ${show(ours)} vs ${show(theirs)}`;
  if (typeof ours !== 'object' || typeof theirs !== 'object' || ours === null || theirs === null || Array.isArray(ours) !== Array.isArray(theirs)) return differ;
  if (Array.isArray(ours) && Array.isArray(theirs)) {
    for (let i = 0; i < Math.max(ours.length, theirs.length); i++) {
      const difference = firstDifference(ours[i], theirs[i], `${path}[${i}]`);
      if (difference) return difference;
    }
    return null;
  }
  const a = ours as Record<string, unknown>;
  const b = theirs as Record<string, unknown>;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const difference = firstDifference(a[key], b[key], `${path}.${key}`);
    if (difference) return difference;
  }
  return null;
}
