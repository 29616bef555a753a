// Written by berth: route fetch() through the job's HTTP proxy.
// Kept dependency-free (node: modules only) and small: it replaces globalThis.fetch for
// http: and https: URLs when a proxy variable applies, and leaves everything else to the
// original. Redirects are returned, not followed (the CLIs berth uses call JSON APIs).
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { Readable } from 'node:stream';

const originalFetch = globalThis.fetch;

function bare(host) {
  return host.replace(/^\[/, '').replace(/\]$/, '');
}

function proxyFor(target) {
  const env = process.env;
  const raw = target.protocol === 'https:'
    ? (env.HTTPS_PROXY || env.https_proxy || env.ALL_PROXY || env.all_proxy)
    : (env.HTTP_PROXY || env.http_proxy || env.ALL_PROXY || env.all_proxy);
  if (!raw) return null;
  const host = bare(target.hostname);
  const skip = (env.NO_PROXY || env.no_proxy || '').split(',')
    .map((entry) => entry.trim().replace(/^\*?\./, '')).filter(Boolean);
  if (skip.some((entry) => entry === '*' || host === entry || host.endsWith('.' + entry))) return null;
  return new URL(raw);
}

function defaultPort(target) {
  return Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
}

function tunnel(proxy, target) {
  const agent = new https.Agent({ keepAlive: false });
  agent.createConnection = (options, done) => {
    const authority = `${target.hostname}:${defaultPort(target)}`;
    const connect = http.request({
      host: bare(proxy.hostname), port: Number(proxy.port) || 80, method: 'CONNECT',
      path: authority, headers: { host: authority },
    });
    connect.once('connect', (response, socket) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        done(new Error(`the proxy refused ${authority}: ${response.statusCode} ${response.statusMessage}`));
        return;
      }
      done(null, tls.connect({ socket, servername: bare(target.hostname), ALPNProtocols: ['http/1.1'] }));
    });
    connect.once('error', done);
    connect.end();
  };
  return agent;
}

globalThis.fetch = async function fetchThroughProxy(input, init) {
  const request = new Request(input, init);
  const target = new URL(request.url);
  const proxy = target.protocol === 'http:' || target.protocol === 'https:' ? proxyFor(target) : null;
  if (!proxy) return originalFetch(input, init);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : null;
  const headers = {};
  request.headers.forEach((value, name) => { headers[name] = value; });
  // The body is passed on as it arrives, so ask for it uncompressed.
  headers['accept-encoding'] = 'identity';
  if (body) headers['content-length'] = String(body.length);
  const options = { method: request.method, headers, signal: request.signal };
  const outgoing = target.protocol === 'http:'
    ? http.request({ ...options, host: bare(proxy.hostname), port: Number(proxy.port) || 80,
                     path: target.href, headers: { ...headers, host: target.host } })
    : https.request(target, { ...options, agent: tunnel(proxy, target) });
  return new Promise((resolve, reject) => {
    outgoing.once('response', (incoming) => {
      const responseHeaders = new Headers();
      for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
        responseHeaders.append(incoming.rawHeaders[i], incoming.rawHeaders[i + 1]);
      }
      const empty = request.method === 'HEAD' || [204, 205, 304].includes(incoming.statusCode);
      const response = new Response(empty ? null : Readable.toWeb(incoming), {
        status: incoming.statusCode, statusText: incoming.statusMessage, headers: responseHeaders,
      });
      Object.defineProperty(response, 'url', { value: request.url });
      resolve(response);
    });
    outgoing.once('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
    outgoing.end(body ?? undefined);
  });
};
