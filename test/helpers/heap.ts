import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The heap in use after two full collections: what is still kept. */
export function retainedHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
