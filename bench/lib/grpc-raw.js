'use strict';
const grpc = require('@grpc/grpc-js');

const identity = (buffer) => buffer;

/** The bare echo service: one unary method whose messages are raw bytes, echoed back. */
const ECHO_PATH = '/bench.Echo/Echo';
const echoService = {
  Echo: { path: ECHO_PATH, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
};

/** A grpc-js client sending pre-encoded bytes to any unary method and returning the raw reply. */
function createRawClient(address) {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  return {
    unary(path, bytes, metadata = new grpc.Metadata()) {
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(path, identity, identity, bytes, metadata, {}, (error, reply) => (error ? reject(error) : resolve(reply)));
      });
    },
    close: () => client.close(),
  };
}

module.exports = { ECHO_PATH, echoService, createRawClient };
