#!/usr/bin/env node
'use strict';
// The HTTP tools examples/tools.yaml names, to try dispatch with: `node examples/tool-server.js`
// serves get_weather (POST /weather) and send_email (POST /email) on 127.0.0.1:8081 (HOST and PORT
// to change it; PORT=0 picks a free port). Weather is made up from the city's name; an email is
// not sent anywhere, only counted and logged with its Idempotency-Key, so that a replay (the same
// recipient and subject in a session) shows as no new line. GET /sent answers the count.
const http = require('node:http');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = process.env.PORT === undefined || process.env.PORT === '' ? 8081 : Number(process.env.PORT);
/** Largest request body read: dispatch sends a tool's arguments, never more than this. */
const MAX_BODY_BYTES = 1024 * 1024;
const CONDITIONS = ['sunny', 'partly cloudy', 'overcast', 'light rain', 'windy', 'snow showers'];

let sent = 0;

/** The same made-up weather for a city every time: a hash of its name picks it. */
function weatherFor(city, units) {
  let hash = 0;
  for (const c of city.toLowerCase()) hash = (hash * 31 + c.codePointAt(0)) >>> 0;
  const celsius = (hash % 35) - 5;
  const temperature = units === 'imperial' ? Math.round((celsius * 9) / 5 + 32) : celsius;
  return { city, units, temperature, conditions: CONDITIONS[hash % CONDITIONS.length] };
}

const routes = {
  'POST /weather': ({ arguments: args = {} }) => {
    if (typeof args.city !== 'string' || args.city.trim() === '') return [400, { error: 'city must be a non-empty string' }];
    return [200, weatherFor(args.city.trim(), args.units === 'imperial' ? 'imperial' : 'metric')];
  },
  'POST /email': ({ arguments: args = {} }, key) => {
    sent += 1;
    console.log(`sent email #${sent} to ${JSON.stringify(args.to)}, subject ${JSON.stringify(args.subject)} (Idempotency-Key ${key || 'none'})`);
    return [200, { sent: true, message_id: `msg-${sent}`, to: args.to, subject: args.subject }];
  },
  'GET /sent': () => [200, { sent }],
};

const server = http.createServer((req, res) => {
  const answer = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const route = routes[`${req.method} ${new URL(req.url, 'http://tools').pathname}`];
  if (route === undefined) return answer(404, { error: `no such tool: ${req.method} ${req.url}` });
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    // Past the bound the rest is read and dropped, so the client gets its 413 whole.
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return answer(413, { error: `request body over ${MAX_BODY_BYTES} bytes` });
    let body = {};
    try {
      body = chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return answer(400, { error: 'the request body is not JSON' });
    }
    const [status, reply] = route(body && typeof body === 'object' ? body : {}, req.headers['idempotency-key']);
    answer(status, reply);
  });
});

server.on('error', (error) => {
  console.error(`examples/tool-server: cannot listen on ${HOST}:${PORT}: ${error.message}`);
  process.exit(1);
});
server.listen(PORT, HOST, () => {
  const { port } = server.address();
  console.log(`example tools listening on http://${HOST}:${port} (get_weather: POST /weather, send_email: POST /email)`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
