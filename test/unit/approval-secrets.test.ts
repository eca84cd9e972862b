import { approvalArguments } from '../../src/pipeline/approval-request';
import { redactSecretFields } from '../../src/middleware';

// An approval shows the arguments that will run (APPROVAL_REQUESTED, ListApprovals, the Redis
// index), which events otherwise never carry: a short secret under a key named like one, which the
// text rules keep as a plain word or as under 8 characters, reached them verbatim (found in a
// review: {"password":"hunter2","secret":"swordfish","token":1234567}).

test('every value under a key named like a secret is hidden, whatever its length; other values stay', () => {
  const shown = JSON.parse(approvalArguments({ password: 'hunter2', secret: 'swordfish', token: 1234567, DB_PASSWORD: 'x', user: 'bob', max_tokens: 100, nested: [{ api_key: 'k1' }], password_required: true, empty: { password: '' } })) as Record<string, unknown>;
  expect(shown).toEqual({
    password: '[REDACTED:secret]',
    secret: '[REDACTED:secret]',
    token: '[REDACTED:secret]',
    DB_PASSWORD: '[REDACTED:secret]',
    user: 'bob',
    max_tokens: 100,
    nested: [{ api_key: '[REDACTED:api_key]' }],
    password_required: true,
    empty: { password: '' },
  });
});

test('the arguments are copied, not changed, and a __proto__ key stays a key', () => {
  const args = JSON.parse('{"__proto__":{"password":"p"},"password":"hunter2"}') as Record<string, unknown>;
  const copy = redactSecretFields(args) as Record<string, unknown>;
  expect(args.password).toBe('hunter2');
  expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  expect(JSON.stringify(copy)).toBe('{"__proto__":{"password":"[REDACTED:secret]"},"password":"[REDACTED:secret]"}');
});

test('secrets in JSON text in a string and in name-value pairs are hidden too (found in a review)', () => {
  const shown = JSON.parse(approvalArguments({ config: '{"password":"hunter2","user":"bob"}', env: [{ name: 'DB_PASSWORD', value: 'hunter2' }, { name: 'MODE', value: 'fast' }], note: '{not json' })) as Record<string, unknown>;
  expect(JSON.parse(shown.config as string)).toEqual({ password: '[REDACTED:secret]', user: 'bob' });
  expect(shown.env).toEqual([{ name: 'DB_PASSWORD', value: '[REDACTED:secret]' }, { name: 'MODE', value: 'fast' }]);
  expect(shown.note).toBe('{not json');
});
