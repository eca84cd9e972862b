import type { ReceivedRequest, ToolRoute } from '../helpers/servers';

/** Answers `{"id": tool_call_id}`. */
const callId = (req: ReceivedRequest) => JSON.stringify({ id: req.body.tool_call_id });

/**
 * A tool route that answers after `ms` with `status` and `body`, unless the client closes the
 * connection first: then the call's tool_call_id is pushed to `closedEarly`.
 */
export const answerAfter = (ms: number, closedEarly: string[], status = 200, body: (req: ReceivedRequest) => string = callId): ToolRoute => (req, res) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(body(req));
      resolve();
    }, ms);
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) closedEarly.push(String(req.body.tool_call_id));
      resolve();
    });
  });
