/** The parts of a multipart/mixed @defer answer (deferSpec=20220824) merged as a client merges them. */

export type Json = Record<string, unknown>;
/** One part: the first holds `data`, the next ones `incremental` items at their paths. */
export interface Payload {
  data?: Json | null; errors?: Json[]; hasNext?: boolean;
  incremental?: { data: Json | null; path: (string | number)[]; label?: string; errors?: Json[] }[];
}

/** Sets `value` at `path` in `target`, merging objects (what Apollo Client's Defer20220824Handler does). */
function mergeAt(target: Json, path: (string | number)[], value: Json) {
  let at: Json = target;
  for (const key of path) at = at[key] as Json;
  for (const [key, item] of Object.entries(value)) {
    const existing = at[key];
    const both = existing && typeof existing === 'object' && item && typeof item === 'object';
    if (both && !Array.isArray(item)) mergeAt(at, [key], item as Json);
    else at[key] = item;
  }
}

/** The answer a client builds: the first part's data, every incremental item merged in, every error. */
export function merged(payloads: Payload[]): { data: Json; errors: Json[] } {
  const [first, ...rest] = payloads;
  const data = structuredClone(first!.data ?? {}) as Json;
  const errors = [...(first!.errors ?? [])];
  for (const payload of rest) {
    for (const item of payload.incremental ?? []) {
      if (item.data) mergeAt(data, item.path, item.data);
      errors.push(...(item.errors ?? []));
    }
    errors.push(...(payload.errors ?? []));
  }
  return { data, errors };
}
