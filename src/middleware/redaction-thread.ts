/**
 * The entry of the redaction worker thread (see redaction-worker.ts): redacts the texts of each job
 * it is sent with redactSecrets and the options it was started with, and answers them in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { redactSecrets, type RedactionOptions } from './redact-secrets';
import { REDACTION_READY, type RedactionAnswer, type RedactionRequest } from './redaction-worker';

const options = (workerData as { options: RedactionOptions }).options;

function answer({ id, texts }: RedactionRequest): RedactionAnswer {
  try {
    return { id, texts: texts.map((text) => redactSecrets(text, options)) };
  } catch (error) {
    // A result past V8's longest string, say: the job fails, and nothing unredacted is sent.
    return { id, error: error instanceof Error ? error.message : String(error) };
  }
}

parentPort!.on('message', (request: RedactionRequest) => parentPort!.postMessage(answer(request)));
parentPort!.postMessage(REDACTION_READY);
