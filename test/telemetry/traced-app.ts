import { startApp, type TestDispatch } from '../helpers/servers';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc-receiver';

/** An in-process app exporting its traces over OTLP/gRPC to a real receiver on loopback. */
export interface TracedApp {
  readonly d: TestDispatch;
  readonly receiver: OtlpGrpcReceiver;
  /** Closes the app, puts the OTEL_* variables back as they were, then closes the receiver. */
  close(): Promise<void>;
}

/**
 * Starts a receiver, then the app of `yaml` with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT naming it
 * (protocol grpc, batches every 20 ms): set in process.env, which the app reads as dispatchd does.
 */
export async function startTracedApp(yaml: string, options: Parameters<typeof startApp>[1] = {}): Promise<TracedApp> {
  const receiver = await startOtlpGrpcReceiver();
  const saved = { ...process.env };
  const restore = async () => {
    process.env = saved;
    await receiver.close();
  };
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '20' });
  let d: TestDispatch;
  try {
    d = await startApp(yaml, options);
  } catch (error) {
    await restore();
    throw error;
  }
  return {
    d,
    receiver,
    async close() {
      await d.close();
      await restore();
    },
  };
}
