// Share links put an operation in the URL's fragment (`#query=...&variables=...&operationName=...`,
// each encodeURIComponent-encoded), which browsers never send: no server or log sees it.

/** The operation a fragment names, or null when it names no query. */
export function readShareLink(hash) {
  const fields = {};
  for (const pair of hash.replace(/^#/, '').split('&')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    try {
      fields[pair.slice(0, eq)] = decodeURIComponent(pair.slice(eq + 1));
    } catch {
      return null;
    }
  }
  if (!fields.query) return null;
  return { query: fields.query, variables: fields.variables ?? '', operationName: fields.operationName ?? '' };
}

/** A link to `operation` on the page at `location`. */
export function shareLink(location, { query, variables, operationName }) {
  const parts = [['query', query], ['variables', variables], ['operationName', operationName]]
    .filter(([, value]) => value)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  return `${location.origin}${location.pathname}#${parts.join('&')}`;
}
