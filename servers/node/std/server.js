'use strict';
// lang_node_std: the shoot-out's Node.js stdlib server: the core `http`
// module on one event loop (one thread of JavaScript), JSON via JSON.parse /
// JSON.stringify. No dependencies.
//
//   node servers/node/std/server.js PORT

const http = require('http');

const NAME = 'lang_node_std';
const HELLO = 'Hello, World!';
const MAX_BODY = 1 << 20;
const TEXT = 'text/plain';
const JSON_TYPE = 'application/json';

function send(res, status, type, body) {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function notFound(res) {
  send(res, 404, TEXT, 'not found\n');
}

// GET /something: one "name=value\n" line per parameter, or the JSON reply
// when json=true is among them. URLSearchParams keeps order and repeats and
// decodes '+' as a space.
function getSomething(res, query) {
  const params = new URLSearchParams(query);
  let wantsJSON = false;
  for (const [k, v] of params) {
    if (k === 'json' && v === 'true') {
      wantsJSON = true;
      break;
    }
  }
  if (wantsJSON) {
    const q = {};
    for (const [k, v] of params) {
      Object.defineProperty(q, k, {
        value: v, enumerable: true, writable: true, configurable: true,
      });
    }
    send(res, 200, JSON_TYPE, JSON.stringify({ message: HELLO, query: q }));
    return;
  }
  let text = '';
  for (const [k, v] of params) text += k + '=' + v + '\n';
  send(res, 200, TEXT, text);
}

// POST /something: parse the body as JSON and echo it with its length.
function postSomething(req, res) {
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size > MAX_BODY) {
      tooLarge = true;
      res.setHeader('Connection', 'close');
      send(res, 413, TEXT, 'body too large\n');
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (tooLarge) return;
    const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    let value;
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      send(res, 400, TEXT, 'invalid JSON\n');
      return;
    }
    send(res, 200, JSON_TYPE, JSON.stringify({ received: value, bytes: size }));
  });
}

function handle(req, res) {
  const url = req.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path === '/') {
    if (req.method === 'GET') {
      send(res, 200, TEXT, HELLO);
      return;
    }
  } else if (path === '/something') {
    if (req.method === 'GET') {
      getSomething(res, q < 0 ? '' : url.slice(q + 1));
      return;
    }
    if (req.method === 'POST') {
      postSomething(req, res);
      return;
    }
  }
  notFound(res);
}

function main() {
  if (process.argv.length !== 3 && process.argv.length !== 4) {
    process.stderr.write(`usage: ${NAME} PORT [ADDR]\n`);
    process.exit(2);
  }
  // ADDR: 127.0.0.1, or the server host's address in the lab's netns host mode
  const host = process.argv[3] || '127.0.0.1';
  const server = http.createServer(handle);
  server.on('error', (err) => {
    process.stderr.write(`${NAME}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(Number(process.argv[2]), host, 1024, () => {
    const a = server.address();
    process.stderr.write(`${NAME}: listening on ${a.address}:${a.port}\n`);
  });
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

main();
