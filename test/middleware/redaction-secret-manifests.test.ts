import { redactSecrets } from '../../src/middleware';
import { slowerThan } from '../helpers/cpu-time';

// Found by a probe: `kubectl get secret -o yaml` of a chart's Secret let values through whose keys
// no pattern names (`key`, `root-user-key`, `htpasswd`: 24 to 28 characters of base64, too short
// for the entropy step). Every value of a Secret's data and stringData is redacted now.

test("a Secret's data is redacted whatever its keys are named; its certificate is kept", () => {
  const yaml = ['apiVersion: v1', 'data:', '  key: dTBrRGg5Y3dhMkxDeWtXUA==', '  root-user-key: QjhqQ1FvOXJVaVRveXdsQWtHRkg=', '  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==', 'kind: Secret', 'metadata:', '  name: app', 'type: Opaque', ''].join('\n');
  expect(redactSecrets(yaml)).toBe(yaml.replace('dTBrRGg5Y3dhMkxDeWtXUA==', '[REDACTED:secret]').replace('QjhqQ1FvOXJVaVRveXdsQWtHRkg=', '[REDACTED:secret]'));
});

test("a List of Secrets (kubectl get secrets -o yaml), stringData quoted and as a block scalar", () => {
  const yaml = [
    'apiVersion: v1',
    'items:',
    '- apiVersion: v1',
    '  kind: Secret',
    '  metadata:',
    '    name: a',
    '  stringData:',
    '    key: "u0kDh9cwa2LCykWP"',
    '    config.yaml: |',
    '      user: admin',
    '      token: s3cr3t',
    '- apiVersion: v1',
    '  data:',
    '    htpasswd: YWRtaW46JGFwcjEk',
    '  kind: Secret',
    'kind: List',
    '',
  ].join('\n');
  expect(redactSecrets(yaml)).toBe(
    yaml
      .replace('"u0kDh9cwa2LCykWP"', '"[REDACTED:secret]"')
      .replace('      user: admin\n      token: s3cr3t', '      [REDACTED:secret]\n      [REDACTED:secret]')
      .replace('YWRtaW46JGFwcjEk', '[REDACTED:secret]'),
  );
});

test("a ConfigMap's data, in the same stream as a Secret, and prose naming a Secret are kept", () => {
  const configMap = ['apiVersion: v1', 'kind: ConfigMap', 'data:', '  key: dTBrRGg5Y3dhMkxDeWtXUA==', '  mode: production'].join('\n');
  const secret = ['apiVersion: v1', 'kind: Secret', 'data:', '  key: dTBrRGg5Y3dhMkxDeWtXUA=='].join('\n');
  expect(redactSecrets(`${configMap}\n---\n${secret}\n`)).toBe(`${configMap}\n---\n${secret.replace('dTBrRGg5Y3dhMkxDeWtXUA==', '[REDACTED:secret]')}\n`);
  const prose = 'Create it with kind: Secret and a data: map, then run kubectl apply.';
  expect(redactSecrets(prose)).toBe(prose);
});

test('many Secrets, or one holding many kind lines, are redacted in linear time', () => {
  const item = ['- apiVersion: v1', '  kind: Secret', '  data:', '    key: dTBrRGg5Y3dhMkxDeWtXUA=='].join('\n');
  const many = (items: number): string => `items:\n${Array.from({ length: items }, () => item).join('\n')}\n`;
  const kinds = (lines: number): string => `${'kind: Secret\n'.repeat(lines)}data:\n  key: x\n`;
  redactSecrets(item);
  // Past a second of CPU, held to 8x the same text a quarter as long (a quadratic one takes 16x).
  for (const [text, quarter] of [[many(20_000), many(5_000)], [kinds(50_000), kinds(12_500)]]) {
    expect(slowerThan(() => redactSecrets(text!), () => redactSecrets(quarter!), 8, 1_000)).toBeUndefined();
  }
});

test('a Secret in JSON (kubectl get secret -o json) has its data redacted, in a List too; its certificate is kept', () => {
  const secret = { apiVersion: 'v1', data: { key: 'dTBrRGg5Y3dhMkxDeWtXUA==', 'tls.crt': 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==' }, kind: 'Secret', metadata: { name: 'app' }, type: 'Opaque' };
  const list = JSON.stringify({ apiVersion: 'v1', items: [secret, { ...secret, data: undefined, stringData: { 'root-user-key': 'B8jCQo9rUiToywlAkGFH' } }], kind: 'List' }, null, 4);
  const redacted = JSON.parse(redactSecrets(list)) as { items: Array<{ data?: Record<string, string>; stringData?: Record<string, string> }> };
  expect(redacted.items[0]!.data).toEqual({ key: '[REDACTED:secret]', 'tls.crt': 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==' });
  expect(redacted.items[1]!.stringData).toEqual({ 'root-user-key': '[REDACTED:secret]' });
  const configMap = JSON.stringify({ kind: 'ConfigMap', data: { key: 'dTBrRGg5Y3dhMkxDeWtXUA==' }, note: 'not a "Secret"' }, null, 4);
  expect(redactSecrets(configMap)).toBe(configMap);
});
