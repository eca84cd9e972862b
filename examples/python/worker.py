"""A worker in Python: it hosts the tool py_word_count on a WorkerService.Work stream (hello,
heartbeats, one completion per assignment), and on a new stream whenever one ends, until SIGTERM
or Ctrl-C.

    python3 worker.py [--address HOST:PORT] [--id WORKER_ID]
"""

import argparse
import json
import queue
import random
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

import dispatch_stubs

HEARTBEAT_SECONDS = 2.0
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": False}


def word_count(arguments: dict) -> str:
    words = arguments["text"].split()
    return json.dumps({"words": len(words), "longest": max(words, key=len) if words else ""})


TOOLS = {"py_word_count": word_count}


# Stream endings another try would meet again: the worker stops instead of opening a new stream.
FINAL = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNIMPLEMENTED}
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 10.0


def serve(stubs, address: str, metadata, worker_id: str, stopping: threading.Event, current: dict):
    """Hosts TOOLS on one Work stream until it ends; gives its status code and details."""
    pb, tool_pb = stubs.worker_pb2, stubs.tool_pb2
    outbox: "queue.Queue[object]" = queue.Queue()
    current["outbox"] = outbox
    ended = threading.Event()
    cancelled: set[str] = set()

    def outgoing():
        while True:
            message = outbox.get()
            if message is None:
                return
            yield message

    def heartbeats():
        while not ended.wait(HEARTBEAT_SECONDS):
            outbox.put(pb.WorkerMessage(heartbeat=pb.Heartbeat()))

    def run(assignment) -> None:
        try:
            output, is_error = TOOLS[assignment.call.name](json.loads(assignment.call.arguments)), False
        except Exception as error:  # the tool's failure is reported to dispatch, not raised
            output, is_error = f"{type(error).__name__}: {error}", True
        if assignment.assignment_id in cancelled:
            return
        completion = pb.Completion(assignment_id=assignment.assignment_id, output=output, is_error=is_error, error_message=output if is_error else "")
        outbox.put(pb.WorkerMessage(completion=completion))
        print(f"completed {assignment.call.name} call={assignment.call.id} attempt={assignment.attempt} error={is_error}", flush=True)

    spec = tool_pb.ToolSpec(
        name="py_word_count",
        description="Counts the words of a text (hosted by a Python worker).",
        input_schema=json.dumps(SCHEMA),
        effect=tool_pb.EFFECT_READ_ONLY,
        concurrency_safe=True,
        timeout_ms=5000,
    )
    outbox.put(pb.WorkerMessage(hello=pb.Hello(worker_id=worker_id, tools=[spec])))
    if stopping.is_set():
        outbox.put(None)
    threading.Thread(target=heartbeats, daemon=True).start()
    try:
        with grpc.insecure_channel(address, options=dispatch_stubs.keepalive_options()) as channel, ThreadPoolExecutor(max_workers=8) as pool:
            stream = stubs.worker_pb2_grpc.WorkerServiceStub(channel).Work(outgoing(), metadata=metadata)
            print(f"worker {worker_id} hosting {', '.join(TOOLS)} on {address}", flush=True)
            try:
                for assignment in stream:
                    if assignment.cancel:
                        cancelled.add(assignment.assignment_id)
                        print(f"cancelled {assignment.assignment_id}", flush=True)
                    else:
                        pool.submit(run, assignment)
                return stream.code(), stream.details()
            except grpc.RpcError as error:
                return error.code(), error.details()
    finally:
        ended.set()
        outbox.put(None)  # ends the request iterator, should the stream have ended first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address")
    parser.add_argument("--id", default="python-worker")
    args = parser.parse_args()

    stubs = dispatch_stubs.load()
    address, metadata = dispatch_stubs.channel_options(args.address)
    stopping = threading.Event()
    current: dict = {}

    def stop(*_):
        stopping.set()
        if "outbox" in current:
            current["outbox"].put(None)  # half-closes the stream: dispatch ends it

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A new stream whenever one ends other than by stop (dispatchd restarted or drained, the
    # connection lost), after a wait drawn at random up to a bound that doubles (full jitter), and
    # starts over after a stream that lasted a minute.
    bound = FIRST_BACKOFF_SECONDS
    while True:
        opened = time.monotonic()
        code, details = serve(stubs, address, metadata, args.id, stopping, current)
        if stopping.is_set():
            break
        if code in FINAL:
            print(f"stream refused: {code.name}: {details}", file=sys.stderr, flush=True)
            return 1
        if time.monotonic() - opened >= 60:
            bound = FIRST_BACKOFF_SECONDS
        wait = random.uniform(0, bound)
        print(f"stream ended ({code.name}: {details}); a new one in {round(wait * 1000)} ms", file=sys.stderr, flush=True)
        if stopping.wait(wait):
            break
        bound = min(MAX_BACKOFF_SECONDS, bound * 2)
    print("worker stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
