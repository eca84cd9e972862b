import { ConfigError, type DispatchConfig } from '../config';
import { DEFAULT_MAX_LABEL_PAIRS } from './label-pairs';

/** The `telemetry:` section of the configuration file. */
export interface TelemetrySettings {
  /** Events carry arguments text instead of its shape; for debugging only. @default false */
  readonly debugPayloads: boolean;
  /** Distinct (tenant, tool) label pairs of the metrics before new ones fold into `_overflow`. @default 1000 */
  readonly maxLabelPairs: number;
}

const KEYS = new Set(['debug_payloads', 'max_label_pairs']);

/** Reads and checks the `telemetry:` section; unknown keys and wrong types are ConfigErrors. */
export function telemetrySettings(config: Pick<DispatchConfig, 'file' | 'telemetry'>): TelemetrySettings {
  const raw = config.telemetry;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(config.file, 'telemetry', 'must be a mapping');
  for (const key of Object.keys(raw)) {
    if (!KEYS.has(key)) throw new ConfigError(config.file, `telemetry.${key}`, `unknown key (expected one of ${[...KEYS].join(', ')})`);
  }
  const debug = raw.debug_payloads ?? false;
  if (typeof debug !== 'boolean') throw new ConfigError(config.file, 'telemetry.debug_payloads', 'must be true or false');
  const maxLabelPairs = raw.max_label_pairs ?? DEFAULT_MAX_LABEL_PAIRS;
  if (typeof maxLabelPairs !== 'number' || !Number.isInteger(maxLabelPairs) || maxLabelPairs < 0) {
    throw new ConfigError(config.file, 'telemetry.max_label_pairs', 'must be an integer >= 0');
  }
  return { debugPayloads: debug, maxLabelPairs };
}
