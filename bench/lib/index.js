'use strict';
// Helpers shared by the bench/*-bench.js modules.
const { startServerProcess } = require('./server-process');
const { measure, measureAll, DEFAULT_DURATION_MS, DEFAULT_WARMUP_MS, DEFAULT_ROUNDS } = require('./load');
const { ECHO_PATH, createRawClient } = require('./grpc-raw');
const { DISPATCH_PATH, dispatchRequests, decodeResponse } = require('./requests');
const { table, loadColumns, verdict, roundRatios, spread, fixed } = require('./report');
const { percentile, createSamples } = require('./stats');

/** Recipes for startServerProcess. */
const RECIPES = {
  bareEcho: require.resolve('./recipes/bare-echo'),
  dispatchApp: require.resolve('./recipes/dispatch-app'),
};

module.exports = {
  startServerProcess,
  measure,
  measureAll,
  DEFAULT_ROUNDS,
  DEFAULT_DURATION_MS,
  DEFAULT_WARMUP_MS,
  ECHO_PATH,
  DISPATCH_PATH,
  createRawClient,
  dispatchRequests,
  decodeResponse,
  table,
  loadColumns,
  verdict,
  roundRatios,
  spread,
  fixed,
  percentile,
  createSamples,
  RECIPES,
};
