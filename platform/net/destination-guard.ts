/**
 * Outbound destinations (connector requests, webhook deliveries): HTTPS only, and never an address in
 * a private, loopback, link-local or otherwise non-public range, checked on the literal host, on every
 * address DNS returns, and again at connect time (so DNS rebinding between the check and the connection
 * gains nothing). ALLOW_PRIVATE_DESTINATIONS lifts all of this for development and tests.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export class DestinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DestinationError';
  }
}

export interface DestinationPolicy {
  allowPrivate: boolean;
}

/** IPv6 global unicast: the only IPv6 block with public addresses. */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * True for addresses outside the public unicast space (IPv4-mapped IPv6 judged by their IPv4 address).
 * IPv6 outside 2000::/3 is never public: ipaddr.js calls unlisted space "unicast", which would let the
 * deprecated IPv4-compatible form (::127.0.0.1, which the URL parser writes ::7f00:1) through.
 */
export function isNonPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (!v6.match(IPV6_GLOBAL_UNICAST)) return true;
  }
  return parsed.range() !== 'unicast';
}

/** Checks the URL's form (and, without DNS, a literal address); returns the parsed URL. */
export function checkUrlForm(raw: string, policy: DestinationPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError(`"${raw}" is not a valid URL`);
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    throw new DestinationError(`${url.protocol.replace(':', '')} URLs are not allowed; use https`);
  }
  if (url.username || url.password) throw new DestinationError('URLs with credentials are not allowed');
  const host = hostOf(url);
  if (!policy.allowPrivate && net.isIP(host) && isNonPublicAddress(host)) {
    throw new DestinationError(`${host} is not a public address`);
  }
  return url;
}

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The refusal for a name that resolves to a non-public address. The address itself stays out: the
 * message reaches the workspace (step errors, delivery attempts), and which private address an internal
 * name maps to is a map of the operator's network.
 */
function nonPublicName(host: string): string {
  return `${host} resolves to a non-public address`;
}

/** Checks the URL and every address its host resolves to. */
export async function checkDestination(raw: string, policy: DestinationPolicy): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  if (policy.allowPrivate) return url;
  const host = hostOf(url);
  if (net.isIP(host)) return url;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch {
    throw new DestinationError(`${host} does not resolve`);
  }
  const bad = addresses.find((a) => isNonPublicAddress(a.address));
  if (bad) throw new DestinationError(nonPublicName(host));
  return url;
}

/**
 * A dns.lookup replacement for the HTTP client's connect step: resolves as usual and refuses non-public
 * addresses, so the address actually connected to is the one that was checked.
 */
export function guardedLookup(policy: DestinationPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses;
      const bad = policy.allowPrivate ? undefined : list.find((a) => isNonPublicAddress(a.address));
      if (bad) {
        return callback(new DestinationError(nonPublicName(hostname)), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}
