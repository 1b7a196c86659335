// The outbound guard: every request Hangar makes to a URL a user supplied goes through one policy,
// checked when the URL is registered (no DNS) and again when a connection is made (after DNS, per
// resolved address), so a name that later resolves somewhere else (DNS rebinding) gets nowhere.
import { AsyncLocalStorage } from 'node:async_hooks';
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, Dispatcher, fetch as undiciFetch, getGlobalDispatcher, setGlobalDispatcher } from 'undici';

/** A request the policy refuses; `reason` says why in words a user can act on. */
export class EgressRefused extends Error {
  override name = 'EgressRefused';
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`outbound request to ${target} refused: ${reason}`);
  }
}

/** How the guard is configured (by the composition root, from `HANGAR_EGRESS_ALLOW` and `HOST`). */
export interface EgressOptions {
  /**
   * `HANGAR_EGRESS_ALLOW`: comma-separated `loopback`, `private`, CIDR ranges, host names (`.suffix`
   * matches sub-domains), or `none`. When unset, a server bound to a loopback address allows
   * loopback and private targets; any other server allows neither.
   */
  allow?: string | undefined;
  /** The address the server listens on (`HOST`). */
  serverHost: string;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// Metadata services of cloud providers that are not link-local already (AWS IPv6, Alibaba, Oracle).
const METADATA = ['fd00:ec2::254', '100.100.100.200', '192.0.0.192'].map((a) => ipaddr.parse(a).toNormalizedString());
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);
// Ranges that are never a legitimate destination of a user's URL, whatever the allow list says.
const ALWAYS_REFUSED = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal', 'reserved', 'teredo', 'benchmarking', 'amt', 'as112', 'as112v6', 'deprecated', 'orchid2', 'discard']);
const RANGE_NAMES: Record<string, string> = { linkLocal: 'a link-local', unspecified: 'an unspecified', broadcast: 'a broadcast', multicast: 'a multicast' };
// fec0::/10 (site-local) is deprecated, but a network may still route it internally, as fc00::/7.
const PRIVATE = new Set(['private', 'uniqueLocal', 'carrierGradeNat', 'deprecatedSiteLocal']);

/** True for addresses of the loopback interface and names that mean it. */
function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const bare = host.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(bare) && unwrap(ipaddr.parse(bare)).range() === 'loopback';
}

/** An IPv6 address that carries an IPv4 one (mapped, IPv4-compatible, NAT64, 6to4) as that IPv4 address. */
function unwrap(addr: Address): Address {
  if (addr.kind() !== 'ipv6') return addr;
  const v6 = addr as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return v6.toIPv4Address();
  const bytes = v6.toByteArray();
  // ::a.b.c.d (IPv4-compatible, deprecated; `::` and `::1` aside): a host with automatic tunnels
  // reaches a.b.c.d through it, so `[::127.0.0.1]` is loopback.
  if (range === 'unicast' && bytes.slice(0, 12).every((b) => b === 0)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (range === 'rfc6052' || range === 'rfc6145') return new ipaddr.IPv4(bytes.slice(12, 16));
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  return v6;
}

/** The outbound policy of one server. */
export class EgressGuard {
  private readonly loopback: boolean;
  private readonly private: boolean;
  private readonly cidrs: [Address, number][] = [];
  private readonly hosts: string[] = [];
  /** A human summary of what is allowed, for logs and errors. */
  readonly summary: string;
  private agent: Agent | undefined;

  constructor(options: EgressOptions) {
    const entries = (options.allow ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
    if (options.allow === undefined || options.allow.trim() === '') {
      // The laptop default: a server only reachable from this machine may call this machine's services.
      const local = isLoopbackHost(options.serverHost);
      this.loopback = local;
      this.private = local;
    } else {
      this.loopback = entries.includes('loopback');
      this.private = entries.includes('private');
      for (const entry of entries) {
        if (entry === 'loopback' || entry === 'private' || entry === 'none') continue;
        if (entry.includes('/')) this.cidrs.push(ipaddr.parseCIDR(entry));
        else this.hosts.push(entry);
      }
    }
    this.summary = [this.loopback ? 'loopback' : '', this.private ? 'private' : '', ...this.cidrs.map(([a, b]) => `${a.toString()}/${b}`), ...this.hosts]
      .filter(Boolean)
      .join(',') || 'public addresses only';
  }

  /** Check `HANGAR_EGRESS_ALLOW` syntax; the message names the bad entry. */
  static validate(allow: string): string | undefined {
    for (const raw of allow.split(',')) {
      const entry = raw.trim().toLowerCase();
      if (!entry || entry === 'loopback' || entry === 'private' || entry === 'none') continue;
      if (entry.includes('/')) {
        if (!ipaddr.isValidCIDR(entry)) return `"${entry}" is not a CIDR range`;
      } else if (!/^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(entry)) {
        return `"${entry}" is neither loopback, private, none, a CIDR range nor a host name`;
      }
    }
    return undefined;
  }

  private hostAllowed(host: string): boolean {
    return this.hosts.some((h) => (h.startsWith('.') ? host.endsWith(h) : host === h));
  }

  /** Why Hangar may not connect to `address` (an IP) on behalf of `host`, or undefined when it may. */
  addressProblem(address: string, host = address): string | undefined {
    const bare = address.replace(/^\[|\]$/g, '');
    if (!ipaddr.isValid(bare)) return `${address} is not an IP address`;
    const addr = unwrap(ipaddr.parse(bare));
    const shown = addr.toString();
    if (METADATA.includes(addr.toNormalizedString())) return `${shown} is a cloud metadata address, which is never allowed`;
    const range = addr.range();
    if (ALWAYS_REFUSED.has(range)) return `${shown} is ${RANGE_NAMES[range] ?? `a reserved (${range})`} address, which is never allowed`;
    if (range === 'loopback' || PRIVATE.has(range)) {
      if (range === 'loopback' ? this.loopback : this.private) return undefined;
      if (this.hostAllowed(host.toLowerCase())) return undefined;
      if (this.cidrs.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return undefined;
      return `${shown} is a ${range === 'loopback' ? 'loopback' : 'private'} address; allow it with HANGAR_EGRESS_ALLOW`;
    }
    return undefined;
  }

  /**
   * Why `url` may not be registered, or undefined when it may: the scheme, literal addresses and
   * names that always mean loopback or metadata. Names are resolved only at connect time.
   */
  urlProblem(url: string): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'must be an absolute http:// or https:// URL';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `must be an http:// or https:// URL, not ${parsed.protocol}`;
    if (parsed.username || parsed.password) return 'must not carry a user name or password; send credentials as headers';
    // WHATWG parsing has already turned decimal, octal and hex IPv4 forms into dotted quads.
    // A trailing dot names the same host (`localhost.`), so it is compared without it.
    const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
    if (METADATA_NAMES.has(host)) return `${host} is a cloud metadata service, which is never allowed`;
    if (ipaddr.isValid(host)) return this.addressProblem(host);
    if (host === 'localhost' || host.endsWith('.localhost')) return this.addressProblem('127.0.0.1', host);
    return undefined;
  }

  /** Throw {@link EgressRefused} unless `url` passes {@link urlProblem}. */
  assertUrl(url: string): void {
    const problem = this.urlProblem(url);
    if (problem) throw new EgressRefused(url, problem);
  }

  /** A `dns.lookup`-compatible function that fails for names resolving to a refused address. */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as dns.LookupAddress[];
      for (const a of list) {
        const problem = this.addressProblem(a.address, hostname);
        if (problem) return callback(new EgressRefused(hostname, `${hostname} resolves to a refused address: ${problem}`), '', 0);
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };

  /** Resolve `hostname` and check every address; the first one, to pin a connection to it. */
  async resolve(hostname: string): Promise<string> {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const problem = this.addressProblem(host, host);
      if (problem) throw new EgressRefused(host, problem);
      return host;
    }
    return new Promise((resolve, reject) => {
      this.lookup(host, {}, (error, address) => (error ? reject(error) : resolve(address as string)));
    });
  }

  /** The undici dispatcher whose every connection passes the policy (literal addresses included). */
  get dispatcher(): Dispatcher {
    if (!this.agent) {
      const connect = buildConnector({ lookup: this.lookup } as buildConnector.BuildOptions);
      this.agent = new Agent({
        connect: (opts, callback) => {
          const host = opts.hostname.replace(/^\[|\]$/g, '');
          // net.connect skips `lookup` for literal addresses, so those are checked here.
          const problem = net.isIP(host) ? this.addressProblem(host) : undefined;
          if (problem) return callback(new EgressRefused(opts.hostname, problem), null);
          return connect(opts, callback);
        },
      });
    }
    return this.agent;
  }

  /** `fetch` through the policy: scheme checked up front, every connection (redirects too) at connect. */
  readonly fetch: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const scheme = new URL(url).protocol;
    if (scheme !== 'http:' && scheme !== 'https:') throw new EgressRefused(url, `only http:// and https:// are allowed, not ${scheme}`);
    const response = await undiciFetch(url, { ...(init as object), dispatcher: this.dispatcher } as Parameters<typeof undiciFetch>[1]);
    return response as unknown as Response;
  };

  /**
   * Run `fn` so that every `fetch` made inside it through the global `fetch` (by libraries that
   * take no fetch or dispatcher option: MCP transports, model SDKs) goes through this policy.
   * Requires {@link installEgressScopes} once per process.
   */
  scope<T>(fn: () => T): T {
    return scopes.run(this, fn);
  }

  /** Close the connection pool. */
  async close(): Promise<void> {
    await this.agent?.close();
  }
}

const scopes = new AsyncLocalStorage<EgressGuard>();

/** The global dispatcher that routes fetches made inside {@link EgressGuard.scope} to that guard. */
class ScopedDispatcher extends Dispatcher {
  constructor(private readonly fallback: Dispatcher) {
    super();
  }
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const guard = scopes.getStore();
    return (guard ? guard.dispatcher : this.fallback).dispatch(options, handler);
  }
  override close(): Promise<void> {
    return this.fallback.close();
  }
  override destroy(): Promise<void> {
    return this.fallback.destroy();
  }
}

let installed = false;

/** Install the scoped global dispatcher (idempotent). Outside a scope, fetch behaves as before. */
export function installEgressScopes(): void {
  if (installed) return;
  installed = true;
  setGlobalDispatcher(new ScopedDispatcher(getGlobalDispatcher()));
}
