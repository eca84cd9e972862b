"""An agent backend in Python: it sends one model turn's tool calls to dispatch and prints the
results the model would read next.

    python3 backend.py [--address HOST:PORT] [--session ID] [--calls JSON]

--calls is a JSON list of {"id", "name", "arguments"} as a model emitted them (arguments is the
raw text, even when it is broken); the default turn calls the built-in echo, the py_word_count
tool of worker.py, and a misspelled tool. The token, TLS and pings come from DISPATCH_* variables
(see dispatch_connection.py); a setting that cannot be used exits 2 before anything connects.
"""

import argparse
import json
import sys
import uuid

import grpc

import dispatch_connection
import dispatch_stubs

DEFAULT_CALLS = [
    {"id": "call_1", "name": "echo", "arguments": '{"text": "hello from python"}'},
    {"id": "call_2", "name": "py_word_count", "arguments": '{"text": "the quick brown fox"}'},
    {"id": "call_3", "name": "ecko", "arguments": "{}"},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address")
    parser.add_argument("--session", default=f"py-{uuid.uuid4().hex[:8]}")
    parser.add_argument("--calls", help="JSON list of tool calls")
    parser.add_argument("--parallel", action="store_true", help="dispatch in parallel mode")
    args = parser.parse_args()

    try:
        connection = dispatch_connection.resolve(args.address)
    except dispatch_connection.SettingError as error:
        print(f"backend.py: {error}", file=sys.stderr)
        return 2
    stubs = dispatch_stubs.load()
    calls = json.loads(args.calls) if args.calls else DEFAULT_CALLS
    request = stubs.dispatch_pb2.DispatchRequest(
        session_id=args.session,
        turn=1,
        calls=[stubs.dispatch_pb2.ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in calls],
        mode=stubs.dispatch_pb2.DISPATCH_MODE_PARALLEL if args.parallel else stubs.dispatch_pb2.DISPATCH_MODE_SEQUENTIAL,
    )
    with connection.channel() as channel:
        dispatch = stubs.dispatch_pb2_grpc.DispatchServiceStub(channel)
        try:
            response = dispatch.Dispatch(request, metadata=connection.metadata, timeout=60)
        except grpc.RpcError as error:
            print(f"dispatch failed: {error.code().name}: {error.details()}", file=sys.stderr)
            return 1
        for result in response.results:
            status = "error" if result.is_error else "ok"
            kind = " " + stubs.dispatch_pb2.ErrorKind.Name(result.error.kind).removeprefix("ERROR_KIND_") if result.is_error else ""
            print(f"{result.tool_call_id} {status}{kind} tool={result.resolved_tool_name or '-'} attempts={result.attempts}: {result.output}")
        dispatch.EndSession(stubs.dispatch_pb2.EndSessionRequest(session_id=args.session), metadata=connection.metadata, timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
