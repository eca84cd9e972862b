import { main } from '../../src/cli/dispatchctl';

/** Runs dispatchctl in this process against `address`; resolves with its exit code, stdout and stderr. */
export function dispatchctlAt(address: () => string) {
  return async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['--address', address(), ...args], (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
}
