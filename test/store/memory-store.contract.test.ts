import { createMemoryStore } from '../../src/store';
import { describeStoreContract } from './store-contract';

describeStoreContract('memory', async (options) => createMemoryStore(options));
