import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressGuard, EgressRefused, installEgressScopes } from './egress.js';

const laptop = new EgressGuard({ serverHost: '127.0.0.1' });
const strict = new EgressGuard({ allow: 'none', serverHost: '127.0.0.1' });
const exposed = new EgressGuard({ serverHost: '0.0.0.0' });

describe('registration check (no DNS)', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', /link-local address, which is never allowed/],
    ['http://[::ffff:169.254.169.254]/', /169\.254\.169\.254 is a link-local/],
    ['http://[fd00:ec2::254]/', /cloud metadata/],
    ['http://metadata.google.internal/', /cloud metadata service/],
    ['http://100.100.100.200/', /cloud metadata/],
    ['http://0.0.0.0:8080/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://224.0.0.1/', /multicast/],
    ['file:///etc/passwd', /http:\/\/ or https:\/\/ URL, not file:/],
    ['gopher://example.com/', /not gopher:/],
    ['javascript:alert(1)', /not javascript:/],
    ['https://user:pw@example.com/', /user name or password/],
    ['not a url', /absolute/],
  ])('always refuses %s', (url, why) => {
    expect(laptop.urlProblem(url)).toMatch(why);
    expect(strict.urlProblem(url)).toMatch(why);
  });

  it.each([
    'http://127.0.0.1:8080/mcp',
    'http://2130706433/', // decimal 127.0.0.1
    'http://0x7f.1/', // hex and short forms
    'http://localhost:3000/',
    'http://localhost.:3000/',
    'http://app.localhost/',
    'http://[::1]/',
    'http://10.0.0.5/',
    'http://192.168.1.10/',
    'http://172.16.0.1/',
    'http://[fd12::1]/',
    'http://[::ffff:10.0.0.1]/',
  ])('refuses loopback and private %s unless allowed; a loopback-bound server allows them', (url) => {
    expect(strict.urlProblem(url)).toMatch(/(loopback|private) address; allow it with HANGAR_EGRESS_ALLOW/);
    expect(exposed.urlProblem(url)).toMatch(/HANGAR_EGRESS_ALLOW/);
    expect(laptop.urlProblem(url)).toBeUndefined();
  });

  it('allows public addresses and names (names are checked at connect time)', () => {
    for (const url of ['https://api.openai.com/v1', 'https://tools.example.com/mcp', 'http://8.8.8.8/']) {
      expect(strict.urlProblem(url)).toBeUndefined();
    }
  });

  it('HANGAR_EGRESS_ALLOW entries: loopback, private, CIDR ranges and host names, never metadata', () => {
    const g = new EgressGuard({ allow: 'loopback, 10.1.0.0/16, git.internal, .corp.example', serverHost: '0.0.0.0' });
    expect(g.urlProblem('http://127.0.0.1/')).toBeUndefined();
    expect(g.urlProblem('http://10.1.2.3/')).toBeUndefined();
    expect(g.urlProblem('http://10.2.0.1/')).toMatch(/private/);
    expect(g.addressProblem('10.9.9.9', 'git.internal')).toBeUndefined();
    expect(g.addressProblem('10.9.9.9', 'svc.corp.example')).toBeUndefined();
    expect(g.addressProblem('10.9.9.9', 'other.example')).toMatch(/private/);
    expect(new EgressGuard({ allow: '169.254.0.0/16', serverHost: '0.0.0.0' }).urlProblem('http://169.254.169.254/')).toMatch(/never allowed/);
  });

  it('validates the setting', () => {
    expect(EgressGuard.validate('loopback,private,10.0.0.0/8,git.internal,.corp.example')).toBeUndefined();
    expect(EgressGuard.validate('10.0.0.0/99')).toMatch(/not a CIDR/);
    expect(EgressGuard.validate('not a host')).toMatch(/neither/);
  });
});

describe('connect time (after DNS, redirects included)', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    installEgressScopes();
    server = http.createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      } else res.end('hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.close();
    await Promise.all([laptop.close(), strict.close()]);
  });

  const refusal = async (p: Promise<Response>) => {
    const error = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const cause = (error as Error).cause ?? error;
    expect(cause).toBeInstanceOf(EgressRefused);
    return (cause as EgressRefused).reason;
  };

  it('guard.fetch refuses a name that resolves to a refused address', async () => {
    expect(await refusal(strict.fetch(`http://localhost:${port}/`))).toMatch(/localhost resolves to a refused address: 127\.0\.0\.1 is a loopback address/);
    expect(await (await laptop.fetch(`http://localhost:${port}/`)).text()).toBe('hello');
  });

  it('guard.fetch refuses literal addresses and redirects to metadata', async () => {
    expect(await refusal(strict.fetch(`http://127.0.0.1:${port}/`))).toMatch(/loopback/);
    expect(await refusal(laptop.fetch(`http://127.0.0.1:${port}/redirect`))).toMatch(/169\.254\.169\.254 is a link-local address/);
  });

  it('global fetch inside a scope goes through that guard; outside it is untouched', async () => {
    expect(await refusal(strict.scope(() => fetch(`http://localhost:${port}/`)))).toMatch(/loopback/);
    expect(await (await laptop.scope(() => fetch(`http://localhost:${port}/`))).text()).toBe('hello');
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('hello');
  });

  it('resolve() returns a checked address to pin, or refuses', async () => {
    expect(await laptop.resolve('localhost')).toMatch(/^(127\.0\.0\.1|::1)$/);
    await expect(strict.resolve('localhost')).rejects.toBeInstanceOf(EgressRefused);
    await expect(laptop.resolve('169.254.169.254')).rejects.toThrow(/link-local/);
  });
});
