'use strict';
const { readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');

/** Rows printed per table. @default 25 */
const TOP = 25;

const root = path.join(__dirname, '..', '..');
function where(frame) {
  const url = frame.url.replace(/^file:\/\//, '');
  if (url === '') return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) return url.slice(nm + 13).split('/').slice(0, url.slice(nm + 13).startsWith('@') ? 2 : 1).join('/');
  if (url.startsWith('node:')) return url;
  return path.relative(root, url);
}

/**
 * Summarises V8 .cpuprofile files: the functions with the most self time, self time by source
 * area, and inclusive time by source area (a package, a node: module, a file of dispatch), as shares of
 * all samples. Returns the tables' rows.
 */
function summariseProfiles(dir) {
  const self = new Map();
  const selfByArea = new Map();
  const inclusive = new Map();
  let total = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    profile.samples.forEach((id, i) => {
      const dt = profile.timeDeltas[i] ?? 0;
      const node = byId.get(id);
      const name = node.callFrame.functionName || '(anonymous)';
      if (name === '(idle)' || name === '(program)') return;
      total += dt;
      const key = `${name} ${where(node.callFrame)}:${node.callFrame.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + dt);
      const area = where(node.callFrame);
      selfByArea.set(area, (selfByArea.get(area) ?? 0) + dt);
      const seen = new Set();
      for (let at = id; at !== undefined; at = parent.get(at)) {
        const area = where(byId.get(at).callFrame);
        if (seen.has(area)) continue;
        seen.add(area);
        inclusive.set(area, (inclusive.get(area) ?? 0) + dt);
      }
    });
  }
  const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([key, us]) => ({ key, share: us / total, ms: us / 1000 }));
  const rows = { selfTop: top(self), selfAreaTop: top(selfByArea), areaTop: top(inclusive), totalMs: total / 1000 };
  console.log(`\nprofile: ${rows.totalMs.toFixed(0)} ms of busy samples in ${dir}`);
  console.log('self time, top functions:');
  for (const r of rows.selfTop) console.log(`  ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.key}`);
  console.log('self time by area:');
  for (const r of rows.selfAreaTop) console.log(`  ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.key}`);
  console.log('inclusive time by area (a package, a node: module, a dispatch file):');
  for (const r of rows.areaTop) console.log(`  ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.key}`);
  return rows;
}

module.exports = { summariseProfiles };
