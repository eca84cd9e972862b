'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', '..', '..', 'dist', 'src');
const EXAMPLE_TOOLS = path.join(__dirname, '..', '..', '..', 'examples', 'tools.yaml');

/**
 * The whole dispatch app (every plugin, as `dispatchd` builds it) from dist/. Options:
 * `configYaml` (config text; default the example tools), `redisUrl` (default none: in-memory),
 * `plugins: false` (the core pipeline and server alone, without any plugin: a diagnostic of what
 * the plugins cost), `metrics: true` (the Prometheus endpoint on, as the Helm chart deploys it),
 * `authToken` (bearer-token auth on, with this one token: callers must send it).
 */
async function start(options = {}) {
  const { buildApp, PLUGINS } = require(path.join(dist, 'app'));
  const { parseConfig } = require(path.join(dist, 'config'));
  const { SILENT_LOGGER } = require(path.join(dist, 'log'));
  let text = options.configYaml ?? readFileSync(EXAMPLE_TOOLS, 'utf8');
  if (options.authToken) {
    const sha256 = require('node:crypto').createHash('sha256').update(options.authToken).digest('hex');
    text = `auth:\n  tokens:\n    - { tenant: bench, scopes: [dispatch], sha256: ${sha256} }\n${text}`;
  }
  const config = parseConfig(text, options.configYaml || options.authToken ? 'bench.yaml' : EXAMPLE_TOOLS);
  const app = await buildApp(config, { logger: SILENT_LOGGER, redisUrl: options.redisUrl, metricsListen: options.metrics ? '127.0.0.1:0' : undefined }, options.plugins === false ? [] : PLUGINS);
  const server = await app.listen('127.0.0.1:0');
  return { port: server.port, close: () => app.close(0) };
}

module.exports = { start };
