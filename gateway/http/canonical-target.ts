const decodeSegment = (segment: string) => {
  try {
    // An encoded `/` stays one segment and an encoded `%` stays a literal, as the router reads them.
    return decodeURIComponent(segment).replaceAll('%', '%25').replaceAll('/', '%2F');
  } catch {
    return segment;
  }
};

/**
 * A request target (path and query) as the router reads its path: each segment percent-decoded and a
 * trailing slash dropped (the gateway ignores it), so `/%67raphql` is `/graphql` and `/users/u%2D1/`
 * is `/users/u-1`. The query is kept as sent. A plain path is its own canonical form.
 */
export function canonicalTarget(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const decoded = path.split('/').map(decodeSegment).join('/');
  return `${decoded.length > 1 ? decoded.replace(/\/$/, '') : decoded}${q < 0 ? '' : url.slice(q)}`;
}
