import { isLoopback } from '../../src/cli/dispatchd-options';
import { isLocalTarget } from '../../src/cli/loopback';

test.each([
  ['127.0.0.1:50051', true],
  ['127.255.0.9:0', true],
  ['[::1]:50051', true],
  ['[0:0:0:0:0:0:0:1]:50051', true],
  ['[::ffff:127.0.0.1]:50051', true],
  ['localhost:50051', true],
  ['LocalHost:50051', true],
  // Names that merely start like a loopback address resolve wherever their DNS says.
  ['127.attacker.example:50051', false],
  ['127.0.0.1.nip.io:50051', false],
  ['localhost.attacker.example:50051', false],
  // Shorthand spellings are not literal addresses to every resolver.
  ['127.1:50051', false],
  ['0.0.0.0:50051', false],
  ['[::]:50051', false],
  ['10.0.0.1:50051', false],
])('dispatchd --listen %s is loopback: %s', (listen, loopback) => {
  expect(isLoopback(listen)).toBe(loopback);
});

test.each([
  ['127.0.0.1:50051', true],
  ['[::1]:50051', true],
  ['localhost', true],
  ['dns:///127.0.0.1:50051', true],
  ['dns://10.0.0.53/localhost:50051', true],
  ['ipv4:127.0.0.1:1,127.0.0.2:2', true],
  ['ipv6:[::1]:50051', true],
  ['ipv6:::1', true],
  ['unix:/run/dispatch.sock', true],
  ['unix-abstract:dispatch', true],
  ['ipv4:127.0.0.1:1,10.0.0.1:2', false],
  ['dispatch.internal:50051', false],
  ['dns:///127.attacker.example:50051', false],
  ['192.0.2.1:50051', false],
])('dispatchctl --address %s stays on this machine: %s', (target, local) => {
  expect(isLocalTarget(target)).toBe(local);
});
