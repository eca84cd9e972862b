import { redactSecrets } from '../../src/middleware';

// Found by probing with secrets as real tools print them: a password given by position, with no
// key and separator before it, went out whole: SQL's CREATE USER ... IDENTIFIED BY and
// PostgreSQL's PASSWORD '...', PHP's define('DB_PASSWORD', ...) and WordPress's salts (an agent
// reading wp-config.php), and redis.conf's requirepass and masterauth.
test.each<[string, string, string]>([
  ["MySQL's IDENTIFIED BY", "mysql> CREATE USER 'app'@'%' IDENTIFIED BY '5O19jLzYlcOu';", "mysql> CREATE USER 'app'@'%' IDENTIFIED BY '[REDACTED:secret]';"],
  ['IDENTIFIED BY PASSWORD and a hash', "ALTER USER 'root'@'localhost' IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9';", "ALTER USER 'root'@'localhost' IDENTIFIED BY PASSWORD '[REDACTED:secret]';"],
  ["Oracle's unquoted IDENTIFIED BY, in lower case", 'create user scott identified by tiger;', 'create user scott identified by [REDACTED:secret];'],
  ["PostgreSQL's PASSWORD", "CREATE ROLE app WITH LOGIN PASSWORD 'correct horse';", "CREATE ROLE app WITH LOGIN PASSWORD '[REDACTED:secret]';"],
  ["PHP's define", "define( 'DB_PASSWORD', 'jR9dnRxIRbAHid' );", "define( 'DB_PASSWORD', '[REDACTED:secret]' );"],
  ["a define's value aligned", "define( 'NONCE_KEY',        'k9#Lm2$pQ7 vX' );", "define( 'NONCE_KEY',        '[REDACTED:secret]' );"],
  ["WordPress's salt, spaces and all", "define('SECURE_AUTH_SALT', 'R|N4{ +a%gh0LZ)Xw^VdJ,.E:]8u<p@|Xm9[YoQ-');", "define('SECURE_AUTH_SALT', '[REDACTED:secret]');"],
  ["redis.conf's lines", 'bind 127.0.0.1\nrequirepass 3WKCeTtRgGmioP1HDUZrLqs3\n  masterauth "s3cr3t pw"\n', 'bind 127.0.0.1\nrequirepass [REDACTED:secret]\n  masterauth "[REDACTED:secret]"\n'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['a reference', "CREATE USER x IDENTIFIED BY '${APP_PASSWORD}';"],
  ["WordPress's placeholders", "define( 'AUTH_KEY',         'put your unique phrase here' );\ndefine( 'DB_PASSWORD', 'password_here' );"],
  ['a define of no secret', "define( 'DB_USER', 'admin' );"],
  ['a commented-out requirepass', '# requirepass foobared'],
  ['PASSWORD NULL', 'ALTER ROLE app PASSWORD NULL;'],
  ['a word after password', 'reset the password to continue'],
  ['requirepass mentioned in prose', 'set requirepass in redis.conf'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});
