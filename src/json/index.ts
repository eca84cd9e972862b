export { canonicalJson } from './canonical-json';
export { readPointer, isJsonPointer } from './json-pointer';
export { jsonDepth } from './json-depth';
export { levenshtein, similarity, closestMatch } from './similarity';
export { shortHash } from './hash';
