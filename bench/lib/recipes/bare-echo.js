'use strict';
const grpc = require('@grpc/grpc-js');
const { echoService } = require('../grpc-raw');

/** The baseline: a bare grpc-js server with one unary method that echoes its request bytes. */
async function start() {
  const server = new grpc.Server();
  server.addService(echoService, { Echo: (call, callback) => callback(null, call.request) });
  const port = await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { port, close: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}

module.exports = { start };
