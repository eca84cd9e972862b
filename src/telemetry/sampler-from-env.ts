import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../log';

/** The sampler when OTEL_TRACES_SAMPLER is unset, as the OpenTelemetry specification says. */
export const DEFAULT_SAMPLER = 'parentbased_always_on';
/** The ratio when OTEL_TRACES_SAMPLER_ARG is unset or out of [0, 1]. */
const DEFAULT_RATIO = 1;

function ratioOf(env: NodeJS.ProcessEnv, logger?: Logger): number {
  const text = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (!text) return DEFAULT_RATIO;
  const ratio = Number(text);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  logger?.warn('OTEL_TRACES_SAMPLER_ARG is not a ratio in [0, 1]; sampling every trace', { value: text });
  return DEFAULT_RATIO;
}

/**
 * The head sampler the standard variables name (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG),
 * built from the SDK's own samplers: always_on, always_off, traceidratio and their parentbased_
 * forms. An unknown name falls back to the default with a warning, as the SDK does.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv, logger?: Logger): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || DEFAULT_SAMPLER;
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratioOf(env, logger));
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratioOf(env, logger)) });
    default:
      logger?.warn(`unknown OTEL_TRACES_SAMPLER; using ${DEFAULT_SAMPLER}`, { value: name });
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
