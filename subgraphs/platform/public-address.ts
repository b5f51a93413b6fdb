import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { LookupFunction } from 'node:net';
import { badInput } from './errors.ts';

export const MAX_URL_LENGTH = 2048;

/**
 * The address rules of every URL the service calls out to on someone's behalf (webhook receivers,
 * OpenID Connect issuers): public https only, loopback too when the deployment allows it
 * (`WEBHOOK_ALLOW_LOOPBACK`, `OIDC_ALLOW_LOOPBACK`). `role` names what the URL is, in messages.
 */
export interface AddressPolicy { allowLoopback: boolean; role?: string }
const roleOf = (policy: AddressPolicy) => policy.role ?? 'receivers';

/**
 * The range of an address as a receiver sees it: an IPv4-mapped IPv6 address is its IPv4 address;
 * an IPv4-compatible one (::/96, deprecated, reaching the embedded IPv4 address on some stacks)
 * is never a receiver. NAT64, 6to4 and Teredo keep ipaddr.js' ranges of their own, refused below.
 */
function rangeOf(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  const range = v6.range();
  return range === 'unicast' && v6.parts.slice(0, 6).every((part) => part === 0) ? 'IPv4-compatible' : range;
}
const allowedRange = (range: string, policy: AddressPolicy) => range === 'unicast' || (range === 'loopback' && policy.allowLoopback);

const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');
/** Names that are loopback by definition (RFC 6761), refused before any lookup when loopback is. */
const loopbackName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

const httpRefused = (policy: AddressPolicy) => (policy.allowLoopback ? 'plain http is accepted on loopback only; use https' : 'url must use https');

/**
 * Checks a receiver URL without touching the network: absolute http(s), no credentials, no
 * fragment; a literal address must be public (or loopback, when allowed: then plain http too).
 * The WHATWG parser has already turned 2130706433, 0x7f.1 and the like into dotted IPv4.
 */
export function parsePublicUrl(raw: unknown, policy: AddressPolicy, field = 'url'): URL {
  if (typeof raw !== 'string' || !raw.trim()) throw badInput('url is required: an https URL', field);
  if (raw.length > MAX_URL_LENGTH) throw badInput(`url must be at most ${MAX_URL_LENGTH} characters`, field);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badInput('url is not an absolute URL', field);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badInput('url must use https', field);
  if (url.username || url.password) throw badInput('url must not carry credentials', field);
  if (url.hash) throw badInput('url must not have a fragment', field);
  const host = bareHost(url);
  if (ipaddr.isValid(host)) {
    const range = rangeOf(host);
    if (!allowedRange(range, policy)) throw badInput(`url points at a ${range} address; ${roleOf(policy)} must be public`, field);
    if (url.protocol === 'http:' && range !== 'loopback') throw badInput(httpRefused(policy), field);
  } else if (loopbackName(host)) {
    if (!policy.allowLoopback) throw badInput(`url points at loopback; ${roleOf(policy)} must be public`, field);
  } else if (url.protocol === 'http:') {
    throw badInput(httpRefused(policy), field);
  }
  return url;
}

export interface ResolvedAddress { address: string; family: 4 | 6 }

/**
 * Resolves the receiver's host and checks every address it has (a name with one private address
 * among public ones is refused), so a delivery can connect to a checked address and nothing else.
 * A name that does not resolve and one that resolves to a refused address get the same answer:
 * partners learn nothing about names inside the network.
 */
export async function resolvePublicUrl(url: URL, policy: AddressPolicy): Promise<ResolvedAddress[]> {
  const host = bareHost(url);
  const role = roleOf(policy);
  const unusable = () => badInput(`the ${role.replace(/s$/, '')}'s host does not resolve to an address ${role} may use (public only)`, 'url');
  const found = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(host, { all: true, verbatim: true }).catch(() => { throw unusable(); });
  if (!found.length) throw unusable();
  for (const { address } of found) {
    const range = rangeOf(address);
    if (!allowedRange(range, policy)) throw unusable();
    if (url.protocol === 'http:' && range !== 'loopback') throw badInput(httpRefused(policy), 'url');
  }
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** Connects to the addresses checked beforehand only, so a DNS answer that changes after the check is never used. */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as LookupFunction;
}
