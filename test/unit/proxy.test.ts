/** Which proxy an upgrade uses, by kubectl's (Go's httpproxy) rules. */
import { describe, expect, it } from 'vitest';
import { chooseProxy, noProxyMatches } from '../../src/kube/proxy.js';

const api = new URL('https://api.prod.example.com:6443');

describe('chooseProxy', () => {
  it("the kubeconfig's proxy-url wins over the environment", () => {
    expect(chooseProxy(api, new URL('socks5://bastion:1080'), { HTTPS_PROXY: 'http://corp:3128' })?.href).toBe('socks5://bastion:1080');
  });

  it('HTTPS_PROXY (or https_proxy) for https servers, HTTP_PROXY for http ones', () => {
    expect(chooseProxy(api, undefined, { HTTPS_PROXY: 'http://corp:3128' })?.href).toBe('http://corp:3128/');
    expect(chooseProxy(api, undefined, { https_proxy: 'http://lower:3128' })?.href).toBe('http://lower:3128/');
    expect(chooseProxy(new URL('http://api:8080'), undefined, { HTTPS_PROXY: 'http://corp:3128' })).toBeUndefined();
    expect(chooseProxy(new URL('http://api:8080'), undefined, { HTTP_PROXY: 'http://corp:3128' })?.host).toBe('corp:3128');
  });

  it('a scheme-less proxy value means http', () => {
    expect(chooseProxy(api, undefined, { HTTPS_PROXY: 'corp:3128' })?.href).toBe('http://corp:3128/');
  });

  it('loopback is never proxied from the environment (as kubectl on 127.0.0.1)', () => {
    for (const host of ['https://127.0.0.1:6443', 'https://localhost:6443', 'https://[::1]:6443', 'https://127.1.2.3']) {
      expect(chooseProxy(new URL(host), undefined, { HTTPS_PROXY: 'http://corp:3128' }), host).toBeUndefined();
    }
  });

  it('NO_PROXY: suffixes, exact hosts, IPs, CIDRs, ports and *', () => {
    expect(noProxyMatches('example.com', 'api.prod.example.com', 6443)).toBe(true);
    expect(noProxyMatches('.example.com', 'api.prod.example.com', 6443)).toBe(true);
    expect(noProxyMatches('example.com', 'example.com', 443)).toBe(true);
    expect(noProxyMatches('ample.com', 'api.prod.example.com', 6443)).toBe(false);
    expect(noProxyMatches('10.0.0.0/8', '10.2.3.4', 443)).toBe(true);
    expect(noProxyMatches('10.0.0.0/8', '11.2.3.4', 443)).toBe(false);
    expect(noProxyMatches('10.2.3.4', '10.2.3.4', 443)).toBe(true);
    expect(noProxyMatches('api.prod.example.com:6443', 'api.prod.example.com', 6443)).toBe(true);
    expect(noProxyMatches('api.prod.example.com:443', 'api.prod.example.com', 6443)).toBe(false);
    expect(noProxyMatches('*', 'anything', 1)).toBe(true);
    expect(chooseProxy(api, undefined, { HTTPS_PROXY: 'http://corp:3128', NO_PROXY: 'internal, .example.com' })).toBeUndefined();
    expect(chooseProxy(api, undefined, { HTTPS_PROXY: 'http://corp:3128', no_proxy: 'other.org' })?.host).toBe('corp:3128');
  });

  it('a proxy value that is not a URL is a typed configuration error', () => {
    expect(() => chooseProxy(api, undefined, { HTTPS_PROXY: 'http://[bad' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
