// ReadResult's NOT_FOUND echoes the handle the client sent, as every echoed id is: cut at 100
// characters (with `...`) and its control and invisible or bidirectional format characters
// written `\u001b` (src/events/terminal-text.ts). Before, the first 100 characters went back raw:
// ESC, CR, LF and a right-to-left override reached the client's logs and terminal as sent.
import * as grpc from '@grpc/grpc-js';
import { startApp } from '../helpers/servers';

jest.setTimeout(20_000);

test("ReadResult's NOT_FOUND shows an unknown handle cut and escaped", async () => {
  const d = await startApp('tools: []\n');
  try {
    const handle = `rh\x1b[2J\u202e\r\n${'x'.repeat(3000)}`;
    await expect(d.dispatch.readResult({ resultHandle: handle })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `result handle "rh\\u001b[2J\\u202e\\u000d\\u000a${'x'.repeat(91)}..." not found (it may have expired)`,
    });
    // A plain handle is echoed as it was sent.
    await expect(d.dispatch.readResult({ resultHandle: 'rh_gone' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND, details: 'result handle "rh_gone" not found (it may have expired)' });
  } finally {
    await d.close();
  }
});
