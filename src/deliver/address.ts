// Where a delivery may connect (server-side request forgery): the address is checked after DNS, at
// connect time, by the socket's own lookup, so a name that resolves to a public address when a URL is
// checked and to a private one when it is fetched (DNS rebinding) is refused all the same.
import dns from 'node:dns';
import net from 'node:net';

/** Loopback: refused unless the operator allows it (--webhooks-allow-loopback), for tests and development. */
const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Never: private, link-local (the clouds' metadata at 169.254.169.254 and fd00:ec2::254), shared, multicast, reserved. */
const REFUSED = new net.BlockList();
for (const [a, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) REFUSED.addSubnet(a, bits, 'ipv4');
for (const [a, bits] of [['::', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64]] as const) REFUSED.addSubnet(a, bits, 'ipv6');

/** A connection this service will not make; the message names the address, never the URL's path or query. */
export class RefusedAddress extends Error {
  readonly code = 'EWEBHOOKREFUSED';
}

/** Why `address` may not be connected to, or null when it may. `http`: a plain-text URL, allowed to loopback only. */
export function addressProblem(address: string, allowLoopback: boolean, http: boolean): string | null {
  let ip = address;
  const family = net.isIP(ip);
  if (family === 0) return `${address} is not an IP address`;
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const type = net.isIPv4(ip) ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(ip, type)) return allowLoopback ? null : `${address} is a loopback address (--webhooks-allow-loopback allows it)`;
  if (http) return 'http is allowed to loopback only: use https';
  if (REFUSED.check(ip, type)) return `${address} is a private, link-local or reserved address`;
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request: dns.lookup, then every address it gives checked; one refused address refuses the name. */
export function guardedLookup(allowLoopback: boolean, http: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const a of addresses) {
        const problem = addressProblem(a.address, allowLoopback, http);
        if (problem !== null) return callback(new RefusedAddress(`${hostname}: ${problem}`), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
