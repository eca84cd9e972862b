import { redactSecrets } from '../../src/middleware';

// A GitLab token is its prefix and 20 characters: too short for the entropy step (32), under no
// key a text names (`git clone https://oauth2:glpat-...@gitlab.com/...` aside), it reached the
// model whole. Personal, deploy, runner and pipeline trigger tokens alike.
test.each([
  ['a personal access token', 'use glpat-Xy9kQ2mR7vT4wZ1pL8nB to push', 'use [REDACTED:api_key] to push'],
  ['a deploy token', 'GITLAB_DEPLOY=gldt-Ab3dE6gH9jK2mN5pQ8sT', 'GITLAB_DEPLOY=[REDACTED:api_key]'],
  ['a runner token', '{"runner":"glrt-Qw8eR7tY6uI5oP4aS3dF"}', '{"runner":"[REDACTED:api_key]"}'],
  ['a pipeline trigger token', 'trigger: glptt-0a1b2c3d4e5f6a7b8c9d', 'trigger: [REDACTED:api_key]'],
])('%s is redacted', (_label, text, expected) => {
  expect(redactSecrets(text)).toBe(expected);
});

test('words that merely start alike are kept', () => {
  for (const text of ['the glpat- prefix names a GitLab token', 'glptt-short', 'ugldt-Ab3dE6gH9jK2mN5pQ8sTxx']) expect(redactSecrets(text)).toBe(text);
});
