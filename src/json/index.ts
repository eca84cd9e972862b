export { canonicalJson } from './canonical-json';
export { readPointer, isJsonPointer } from './json-pointer';
export { jsonDepth, nestsDeeper } from './json-depth';
export { levenshtein, similarity, closestMatch } from './similarity';
export { shortHash } from './hash';
