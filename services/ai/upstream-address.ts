import { type LookupAddress, lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ApiError } from '../../shared/errors.ts';

/**
 * Where an upstream base URL may not lead: link-local addresses and the clouds' instance metadata
 * services, which hand out the machine's own credentials to whoever asks from inside it.
 * Loopback and private ranges stay allowed (local servers such as Ollama live there).
 */
const REFUSED = new BlockList();
REFUSED.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local; AWS, GCP, Azure, OCI metadata at .169.254
REFUSED.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
REFUSED.addSubnet('fe80::', 10, 'ipv6');
REFUSED.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog']);

export const ALLOW_PRIVATE_UPSTREAMS = 'STUDIO_ALLOW_PRIVATE_UPSTREAMS';

/** True for a link-local or metadata address (IPv4-mapped IPv6 included). */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return REFUSED.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A URL's hostname (`[fe80::1]` as `fe80::1`) when it names a refused host outright. */
export function isRefusedHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  return METADATA_NAMES.has(host) || isRefusedAddress(host);
}

/** Raised inside a connection attempt when a name resolves to a refused address. */
export class RefusedUpstreamAddress extends Error {
  override readonly name = 'RefusedUpstreamAddress';
  readonly code = 'UPSTREAM_ADDRESS_REFUSED';
  constructor(readonly hostname: string) {
    super(`${hostname} resolves to a link-local or cloud metadata address`);
  }
}

/**
 * The DNS lookup upstream connections use: every address a name resolves to is checked, and the
 * connection goes to one of those checked addresses, so a name cannot be re-pointed between the
 * check and the connection.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '');
    if (isRefusedHost(hostname) || addresses.some((a) => isRefusedAddress(a.address)))
      return callback(new RefusedUpstreamAddress(hostname), '');
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};

/** The 502 naming the variable that points at a refused address. */
export function refusedUpstream(variable: string, hostname: string): ApiError {
  return new ApiError(
    'upstream_not_allowed',
    `${variable} points at ${hostname}, a link-local or cloud metadata address; the gateway does ` +
      `not call such addresses unless ${ALLOW_PRIVATE_UPSTREAMS}=true`,
  );
}
