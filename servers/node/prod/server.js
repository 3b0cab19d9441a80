'use strict';
// lang_node_fastify: the shoot-out's Node.js "production" server: Fastify
// behind the core `cluster` module, one worker per CPU in the affinity mask.
//
//   node servers/node/prod/server.js PORT
//
// The primary only forks (and reaps): the cluster scheduling policy is
// SCHED_NONE, so the workers share the listening socket and the kernel hands
// each accepted connection to one of them; with the default round-robin
// policy the primary would accept every connection itself and pass it on.
//
// CPU count: Cpus_allowed_list in /proc/self/status (the affinity mask taskset
// sets), falling back to os.availableParallelism() (libuv also reads the
// affinity mask on Linux, so the two agree; the file is read so that this
// does not rest on the libuv version).

const cluster = require('cluster');
const fs = require('fs');
const os = require('os');

const NAME = 'lang_node_fastify';
const HELLO = 'Hello, World!';
const TEXT = 'text/plain';
const JSON_TYPE = 'application/json';
const MAX_BODY = 1 << 20;

function affinityCpus() {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(status);
    if (m) {
      let n = 0;
      for (const part of m[1].split(',')) {
        const [lo, hi] = part.split('-').map(Number);
        n += hi === undefined ? 1 : hi - lo + 1;
      }
      if (n > 0) return n;
    }
  } catch (e) {
    // not Linux: fall through
  }
  return os.availableParallelism ? os.availableParallelism() : os.cpus().length;
}

function startWorker(port) {
  const fastify = require('fastify')({
    logger: false,
    bodyLimit: MAX_BODY,
    exposeHeadRoutes: false,
    // Keep the raw query string; the handlers parse it with URLSearchParams,
    // which keeps order and repeats (the text route needs both).
    routerOptions: { querystringParser: (s) => s },
  });

  // Bodies reach the handler as a Buffer whatever their content type; the
  // handler parses the JSON itself (a non-JSON body is a 400, and the
  // default parser would refuse keys such as __proto__).
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    done(null, body);
  });

  fastify.get('/', (request, reply) => {
    reply.header('content-type', TEXT).send(HELLO);
  });

  fastify.get('/something', (request, reply) => {
    const params = new URLSearchParams(request.query);
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
      reply.header('content-type', JSON_TYPE)
        .send(JSON.stringify({ message: HELLO, query: q }));
      return;
    }
    let text = '';
    for (const [k, v] of params) text += k + '=' + v + '\n';
    reply.header('content-type', TEXT).send(text);
  });

  fastify.post('/something', (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let value;
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      reply.code(400).header('content-type', TEXT).send('invalid JSON\n');
      return;
    }
    reply.header('content-type', JSON_TYPE)
      .send(JSON.stringify({ received: value, bytes: raw.length }));
  });

  fastify.setNotFoundHandler((request, reply) => {
    reply.code(404).header('content-type', TEXT).send('not found\n');
  });

  fastify.listen({ port, host: process.env.LANG_ADDR, backlog: 1024 }, (err) => {
    if (err) {
      process.stderr.write(`${NAME}: ${err.message}\n`);
      process.exit(1);
    }
  });
  process.on('SIGTERM', () => process.exit(0));
}

function startPrimary(port, host) {
  const n = affinityCpus();
  let listening = 0;
  let stopping = false;
  cluster.on('listening', (worker, address) => {
    listening += 1;
    if (listening === n) {
      process.stderr.write(`${NAME}: listening on ${host}:${address.port}\n`);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
      return;
    }
    if (listening < n) {
      // A worker that failed to start (port taken, ...): give up, no retries.
      process.stderr.write(`${NAME}: worker ${worker.process.pid} failed to start\n`);
      for (const w of Object.values(cluster.workers)) w.process.kill('SIGTERM');
      process.exit(1);
    }
    process.stderr.write(`${NAME}: worker ${worker.process.pid} died (${signal || code}), restarting\n`);
    cluster.fork({ LANG_PORT: String(port), LANG_ADDR: host });
  });
  process.on('SIGTERM', () => {
    stopping = true;
    const workers = Object.values(cluster.workers);
    if (workers.length === 0) process.exit(0);
    for (const w of workers) w.process.kill('SIGTERM');
  });
  for (let k = 0; k < n; k++) cluster.fork({ LANG_PORT: String(port), LANG_ADDR: host });
}

function main() {
  if (cluster.isPrimary) {
    if (process.argv.length < 3 || process.argv.length > 4 || !/^\d+$/.test(process.argv[2])) {
      process.stderr.write(`usage: ${NAME} PORT [ADDR]\n`);
      process.exit(2);
    }
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    // ADDR: 127.0.0.1, or the server host's address in the lab's netns host mode
    startPrimary(Number(process.argv[2]), process.argv[3] || '127.0.0.1');
  } else {
    startWorker(Number(process.env.LANG_PORT));
  }
}

main();
