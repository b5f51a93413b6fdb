import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { badInput } from '../errors.ts';

export const MAX_URL_LENGTH = 2048;

/** An address a receiver may have: public unicast, or loopback (a receiver on the same machine). */
function rangeOf(address: string): string {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range();
}
const allowedRange = (range: string) => range === 'unicast' || range === 'loopback';

const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Checks a receiver URL without touching the network: absolute http(s), no credentials, no
 * fragment; plain http only for a loopback host; a literal address must be public or loopback.
 */
export function parseReceiverUrl(raw: unknown, field = 'url'): URL {
  if (typeof raw !== 'string' || !raw.trim()) throw badInput('url is required: an https URL (or http on loopback)', field);
  if (raw.length > MAX_URL_LENGTH) throw badInput(`url must be at most ${MAX_URL_LENGTH} characters`, field);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badInput('url is not an absolute URL', field);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badInput('url must use https (or http on loopback)', field);
  if (url.username || url.password) throw badInput('url must not carry credentials', field);
  if (url.hash) throw badInput('url must not have a fragment', field);
  const host = bareHost(url);
  if (ipaddr.isValid(host)) {
    const range = rangeOf(host);
    if (!allowedRange(range)) throw badInput(`url points at a ${range} address; receivers must be public or loopback`, field);
    if (url.protocol === 'http:' && range !== 'loopback') throw badInput('plain http is accepted on loopback only; use https', field);
  } else if (url.protocol === 'http:' && host !== 'localhost') {
    throw badInput('plain http is accepted on loopback only; use https', field);
  }
  return url;
}

export interface ResolvedAddress { address: string; family: 4 | 6 }

/**
 * Resolves the receiver's host and checks every address it has (a name with one private address
 * among public ones is refused), so a delivery can connect to a checked address and nothing else.
 */
export async function resolveReceiver(url: URL): Promise<ResolvedAddress[]> {
  const host = bareHost(url);
  const found = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(host, { all: true, verbatim: true }).catch((error: NodeJS.ErrnoException) => {
      throw badInput(`the receiver's host does not resolve (${error.code ?? 'DNS error'})`, 'url');
    });
  if (!found.length) throw badInput("the receiver's host does not resolve", 'url');
  for (const { address } of found) {
    const range = rangeOf(address);
    if (!allowedRange(range)) throw badInput(`the receiver's host resolves to a ${range} address (${address}); receivers must be public or loopback`, 'url');
    if (url.protocol === 'http:' && range !== 'loopback') throw badInput('plain http is accepted on loopback only; use https', 'url');
  }
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}
