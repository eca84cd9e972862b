"""A worker in Python: it hosts the tool py_word_count on a WorkerService.Work stream (hello,
heartbeats, one completion per assignment) until SIGTERM or Ctrl-C.

    python3 worker.py [--address HOST:PORT] [--id WORKER_ID]
"""

import argparse
import json
import queue
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import grpc

import dispatch_stubs

HEARTBEAT_SECONDS = 2.0
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": False}


def word_count(arguments: dict) -> str:
    words = arguments["text"].split()
    return json.dumps({"words": len(words), "longest": max(words, key=len) if words else ""})


TOOLS = {"py_word_count": word_count}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address")
    parser.add_argument("--id", default="python-worker")
    args = parser.parse_args()

    stubs = dispatch_stubs.load()
    pb, tool_pb = stubs.worker_pb2, stubs.tool_pb2
    address, metadata = dispatch_stubs.channel_options(args.address)
    outbox: "queue.Queue[object]" = queue.Queue()
    stopping = threading.Event()
    cancelled: set[str] = set()

    def outgoing():
        while True:
            message = outbox.get()
            if message is None:
                return
            yield message

    def heartbeats():
        while not stopping.wait(HEARTBEAT_SECONDS):
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

    def stop(*_):
        stopping.set()
        outbox.put(None)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    spec = tool_pb.ToolSpec(
        name="py_word_count",
        description="Counts the words of a text (hosted by a Python worker).",
        input_schema=json.dumps(SCHEMA),
        effect=tool_pb.EFFECT_READ_ONLY,
        concurrency_safe=True,
        timeout_ms=5000,
    )
    outbox.put(pb.WorkerMessage(hello=pb.Hello(worker_id=args.id, tools=[spec])))
    threading.Thread(target=heartbeats, daemon=True).start()
    with grpc.insecure_channel(address) as channel, ThreadPoolExecutor(max_workers=8) as pool:
        stream = stubs.worker_pb2_grpc.WorkerServiceStub(channel).Work(outgoing(), metadata=metadata)
        print(f"worker {args.id} hosting {', '.join(TOOLS)} on {address}", flush=True)
        try:
            for assignment in stream:
                if assignment.cancel:
                    cancelled.add(assignment.assignment_id)
                    print(f"cancelled {assignment.assignment_id}", flush=True)
                else:
                    pool.submit(run, assignment)
        except grpc.RpcError as error:
            if not stopping.is_set():
                print(f"stream ended: {error.code().name}: {error.details()}", file=sys.stderr, flush=True)
                return 1
    print("worker stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
