/**
 * The entry of the schema compiler's worker thread (see compile-worker.ts): compiles each schema
 * text it is sent to module source, and V8's code cache of that module, warmed by one call.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RE2 } from 're2-wasm';
import { createSchemaCodegen } from './schema-codegen';
import { loadSchemaModule } from './schema-module';
import { WORKER_READY, type CompileRequest, type CompileAnswer } from './compile-worker';

const generate = createSchemaCodegen((workerData as { maxSchemaBytes: number }).maxSchemaBytes);

function answer({ id, text, patternBound, checkMistakes }: CompileRequest): CompileAnswer {
  let code;
  try {
    code = generate(text, patternBound, checkMistakes);
  } catch (error) {
    return { id, error: (error as Error).message };
  }
  // Its RE2s are this thread's, freed once the cache is made.
  const made: RE2[] = [];
  try {
    const { validate, script } = loadSchemaModule(code.module, (pattern, flags) => {
      const re = new RE2(pattern, flags);
      made.push(re);
      return re;
    });
    // A first call compiles the validate function (lazily compiled otherwise): the cache holds it.
    validate({});
    return { id, module: code.module, unknownFormats: code.unknownFormats, cachedData: script?.createCachedData() };
  } catch {
    // The main thread evaluates the source without a cache, and reports what fails.
    return { id, module: code.module, unknownFormats: code.unknownFormats };
  } finally {
    for (const re of made) (re as unknown as { wrapper: { delete(): void } }).wrapper.delete();
  }
}

parentPort!.on('message', (request: CompileRequest) => parentPort!.postMessage(answer(request)));
parentPort!.postMessage(WORKER_READY);
