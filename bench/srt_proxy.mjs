// srt's HTTP proxy (@anthropic-ai/sandbox-runtime) for bench/proxy.sh, with the same
// allow list and name map as the `cordon proxy` run: sink.bench/web.bench -> 127.0.0.2
// (allowed), denied.bench -> 127.0.0.3 (refused). Usage: node srt_proxy.mjs PREFIX
// (where `npm install --prefix PREFIX @anthropic-ai/sandbox-runtime` put it). Prints
// {"listen": "127.0.0.1:PORT"}.
import { pathToFileURL } from 'node:url';
const prefix = process.argv[2];
const mod = await import(pathToFileURL(
  `${prefix}/node_modules/@anthropic-ai/sandbox-runtime/dist/sandbox/http-proxy.js`).href);
const map = { 'sink.bench': '127.0.0.2', 'web.bench': '127.0.0.2', 'denied.bench': '127.0.0.3' };
const allow = new Set(['sink.bench', 'web.bench', '127.0.0.2']);
const lookup = (host, opts, cb) => {
  if (typeof opts === 'function') { cb = opts; opts = {}; }
  const a = map[host] ?? host;
  const family = a.includes(':') ? 6 : 4;
  if (opts && opts.all) cb(null, [{ address: a, family }]);
  else cb(null, a, family);
};
const server = mod.createHttpProxyServer({
  filter: (_port, host) => allow.has(host),
  lookupFor: () => lookup,
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ listen: `127.0.0.1:${server.address().port}` }));
});
