"""An agent backend in Python: it sends a conversation's tool calls to dispatch, one turn at a time
in one session, and prints the results the model would read next.

    python3 backend.py [--address HOST:PORT] [--session ID] [--parallel] [--calls JSON | --text TEXT]...

Each --calls is a turn: a JSON list of {"id", "name", "arguments"} as a model emitted them
(arguments is the raw text, even when it is broken). Each --text is a turn too: a model's reply in
which dispatch finds the tool calls (ParseToolCalls). With neither, one turn calls the built-in
echo, the py_word_count tool of worker.py, and a misspelled tool. The turns share one session,
ended once after the last: the session is what lets dispatch see a loop across turns and replay a
side effect a retry sends again, so an agent ends it when the conversation ends, not per turn.
The token, TLS and pings come from DISPATCH_* variables (see dispatch_connection.py); a setting
that cannot be used exits 2 before anything connects.
"""

import argparse
import json
import sys
import time
import uuid

import dispatch_stubs  # first: it says what to install when grpcio is missing

import grpc

import dispatch_connection

DEFAULT_CALLS = [
    {"id": "call_1", "name": "echo", "arguments": '{"text": "hello from python"}'},
    {"id": "call_2", "name": "py_word_count", "arguments": '{"text": "the quick brown fox"}'},
    {"id": "call_3", "name": "ecko", "arguments": "{}"},
]
# The longest wait a soft error's retry_after_ms may impose before the next turn.
MAX_PAUSE_MS = 60_000
# ReadResult pages read of one truncated result (of up to 65,536 characters each).
MAX_PAGES = 64


def calls_turn(text: str) -> list[dict]:
    """A --calls value, checked: a bad one is a usage error naming what is wrong, not a traceback."""
    try:
        calls = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error})") from None
    if not isinstance(calls, list):
        raise argparse.ArgumentTypeError('a JSON list of {"id", "name", "arguments"} is expected')
    for i, call in enumerate(calls):
        fields = call.keys() if isinstance(call, dict) else ()
        bad = [f for f in ("id", "name", "arguments") if f not in fields or not isinstance(call[f], str)]
        if bad:
            raise argparse.ArgumentTypeError(f"call {i} needs {', '.join(bad)} as strings (arguments is the JSON text the model emitted), got {json.dumps(call)[:200]}")
    return calls


def hard_error_reason(error: grpc.RpcError, stubs) -> str:
    """The google.rpc.ErrorInfo reason of an RPC failure (LOOP_DETECTED, RECOVERY_EXHAUSTED,
    OVERLOADED, SHUTTING_DOWN...), decoded from its grpc-status-details-bin trailer; "" without."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in stubs.status_pb2.Status.FromString(value).details:
                info = stubs.error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason
    return ""


class Conversation:
    """One session of dispatch, turn after turn, on one channel."""

    def __init__(self, stubs, channel: grpc.Channel, metadata, session_id: str, parallel: bool) -> None:
        self.pb = stubs.dispatch_pb2
        self.stub = stubs.dispatch_pb2_grpc.DispatchServiceStub(channel)
        self.metadata = metadata
        self.session_id = session_id
        self.mode = self.pb.DISPATCH_MODE_PARALLEL if parallel else self.pb.DISPATCH_MODE_SEQUENTIAL
        self.turns = 0

    def parse(self, text: str) -> list[dict]:
        found = self.stub.ParseToolCalls(self.pb.ParseToolCallsRequest(text=text), metadata=self.metadata, timeout=30)
        print(f"parsed {len(found.calls)} call(s) from the text ({found.format or 'none found'})")
        # What was found and not returned (malformed, cut off, not offered): an agent tells the model.
        for warning in found.warnings:
            print(f"  warning: {warning}")
        return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in found.calls]

    def dispatch(self, calls: list[dict]):
        self.turns += 1
        request = self.pb.DispatchRequest(session_id=self.session_id, turn=self.turns, calls=[self.pb.ToolCall(**c) for c in calls], mode=self.mode)
        # The channel's retry policy sends this same request again on UNAVAILABLE or RESOURCE_EXHAUSTED.
        return self.stub.Dispatch(request, metadata=self.metadata, timeout=60)

    def read_whole(self, handle: str) -> str:
        """The whole text of a truncated result, page by page."""
        text, offset = "", 0
        for _ in range(MAX_PAGES):
            page = self.stub.ReadResult(self.pb.ReadResultRequest(result_handle=handle, offset=offset, limit=65_536), metadata=self.metadata, timeout=30)
            text += page.text
            if page.next_offset >= page.total_chars or not page.text:
                break
            offset = page.next_offset
        return text

    def end(self) -> None:
        try:
            self.stub.EndSession(self.pb.EndSessionRequest(session_id=self.session_id), metadata=self.metadata, timeout=10)
        except grpc.RpcError as error:  # the session then expires on its own
            print(f"EndSession failed: {error.code().name}: {error.details()}", file=sys.stderr)


def show(conversation: Conversation, result) -> int:
    """Prints a result as the model would read it; gives the wait it asks for before the next turn."""
    pb = conversation.pb
    kind = " " + pb.ErrorKind.Name(result.error.kind).removeprefix("ERROR_KIND_") if result.is_error else ""
    print(f"{result.tool_call_id} {'error' if result.is_error else 'ok'}{kind} tool={result.resolved_tool_name or '-'} attempts={result.attempts}: {result.output}")
    for warning in result.warnings:  # repairs of its arguments, a cut text: worth the model's reading too
        print(f"  warning: {warning}")
    # Answered from dispatch's records, the tool not run: worth telling the model, which may have
    # meant to act again (a side effect is keyed by session, tool and key arguments, never the call id).
    if result.idempotent_replay:
        print("  replayed: the result of an earlier call in this session with the same key arguments; the tool did not run again")
    elif result.cached:
        print("  cached: a read-only tool's remembered answer (memoize); the tool did not run again")
    if result.truncated and result.result_handle:
        whole = conversation.read_whole(result.result_handle)
        print(f"  truncated: {len(whole)} characters in all, read with ReadResult")
    if result.is_error and result.error.recoverable and result.error.retry_after_ms:
        print(f"  retry_after_ms: {result.error.retry_after_ms}")
        return min(result.error.retry_after_ms, MAX_PAUSE_MS)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address")
    parser.add_argument("--session", default=f"py-{uuid.uuid4().hex[:8]}")
    parser.add_argument("--calls", dest="turns", action="append", type=calls_turn, help="a turn: JSON list of tool calls (repeatable)")
    parser.add_argument("--text", dest="turns", action="append", help="a turn: model text to parse for tool calls (repeatable)")
    parser.add_argument("--parallel", action="store_true", help="dispatch in parallel mode")
    args = parser.parse_args()

    try:
        connection = dispatch_connection.resolve(args.address)
    except dispatch_connection.SettingError as error:
        print(f"backend.py: {error}", file=sys.stderr)
        return 2
    stubs = dispatch_stubs.load()
    turns = args.turns or [DEFAULT_CALLS]
    with connection.channel() as channel:
        conversation = Conversation(stubs, channel, connection.metadata, args.session, args.parallel)
        try:
            pause_ms = 0
            for turn in turns:
                # A call refused with retry_after_ms would be refused again sooner: the model's next
                # turn (often the same call) waits that long.
                if pause_ms:
                    print(f"waiting {pause_ms} ms (retry_after_ms) before the next turn")
                    time.sleep(pause_ms / 1000)
                if len(turns) > 1:
                    print(f"-- turn {conversation.turns + 1}")
                calls = conversation.parse(turn) if isinstance(turn, str) else turn
                response = conversation.dispatch(calls)
                pause_ms = max([show(conversation, r) for r in response.results], default=0)
        except grpc.RpcError as error:
            # A hard error: LOOP_DETECTED or RECOVERY_EXHAUSTED end the agent's tool use for this
            # conversation; OVERLOADED and SHUTTING_DOWN came back after the retries ran out.
            reason = hard_error_reason(error, stubs)
            print(f"dispatch failed: {error.code().name}{' ' + reason if reason else ''}: {error.details()}", file=sys.stderr)
            return 1
        finally:
            conversation.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
