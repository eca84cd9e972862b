import { fetch as undiciFetch } from 'undici';
import { decoderFor, readCapped } from '../../src/executors/http-body';
import { createPolicyEndpoint, MAX_ENDPOINT_ANSWER_BYTES } from '../../src/guards';
import { SILENT_LOGGER } from '../../src/log';
import { startToolServer, type ToolServer } from '../helpers/servers';

// readCapped serves the HTTP executor (undici's Response, the charset of the Content-Type) and the
// policy endpoint (the global fetch's Response, UTF-8): each names the overflow in its own terms.
describe('readCapped', () => {
  let server: ToolServer;
  beforeAll(async () => {
    server = await startToolServer({
      '/small': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9])),
      '/large': (_req, res) => void res.writeHead(200).end('x'.repeat(MAX_ENDPOINT_ANSWER_BYTES + 1)),
      '/empty': (_req, res) => void res.writeHead(204).end(),
    });
  });
  afterAll(() => server.close());

  const tooLarge = () => new Error('too large');

  test('reads a whole body within the cap with the decoder given', async () => {
    const response = await undiciFetch(`${server.url}/small`, { method: 'POST' });
    expect(await readCapped(response, 4, tooLarge, decoderFor(response))).toBe('café');
  });

  test('a body without content reads as empty', async () => {
    const response = await fetch(`${server.url}/empty`, { method: 'POST' });
    expect(await readCapped(response, 4, tooLarge, new TextDecoder())).toBe('');
  });

  test('past the cap the error of the caller is thrown', async () => {
    const response = await undiciFetch(`${server.url}/large`, { method: 'POST' });
    await expect(readCapped(response, 1024, tooLarge, decoderFor(response))).rejects.toThrow('too large');
  });

  test('the policy endpoint blocks a call whose answer is over its cap, saying so', async () => {
    const ask = createPolicyEndpoint({ url: `${server.url}/large`, match: ['*'], timeoutMs: 5000, failOpen: false, headers: {} }, SILENT_LOGGER);
    const answer = await ask({ tool: 't', args: {}, sessionId: 's', tenant: '', signal: new AbortController().signal });
    expect(answer).toEqual({
      action: 'block',
      reason: `the policy service could not be consulted (its answer is over ${MAX_ENDPOINT_ANSWER_BYTES} bytes), so the call was refused`,
    });
  });
});
