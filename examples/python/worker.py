"""A worker in Python: it hosts the tool py_word_count on a WorkerService.Work stream (hello,
heartbeats, one completion per assignment), and on a new stream whenever one ends, until SIGTERM
or Ctrl-C.

    python3 worker.py [--address HOST:PORT] [--id WORKER_ID]

The token, TLS and pings come from DISPATCH_* variables (see dispatch_connection.py); a setting
that cannot be used exits 2 before anything connects.
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

import dispatch_stubs  # first: it says what to install when grpcio is missing

import grpc

import dispatch_connection

HEARTBEAT_SECONDS = 2.0
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": False}


def word_count(arguments: dict) -> str:
    words = arguments["text"].split()
    return json.dumps({"words": len(words), "longest": max(words, key=len) if words else ""})


TOOLS = {"py_word_count": word_count}


# Stream endings another try would meet again: the worker stops instead of opening a new stream.
# ALREADY_EXISTS: another tenant's tool has one of these names; FAILED_PRECONDITION: the worker
# broke the protocol (a second hello, a completion before hello).
FINAL = {
    grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.FAILED_PRECONDITION,
}
# dispatch sends nothing when it accepts a hello, and refuses one at once: a stream still open this
# long after hello, or one an assignment came on, is taken as accepted ("hosting" is said then).
ACCEPTED_AFTER_SECONDS = 1.0
FIRST_BACKOFF_SECONDS = 0.5
# The longest a stopping worker waits for its held calls before it half-closes its stream.
DRAIN_SECONDS = 30.0
MAX_BACKOFF_SECONDS = 10.0


def say(line: str) -> None:
    """Prints a whole line in one write: print() writes the text and its newline apart, so the
    lines of threads printing at once ran together."""
    sys.stdout.write(f"{line}\n")
    sys.stdout.flush()


class Assignments:
    """The assignments of one stream not yet answered, and which of them dispatch cancelled. A
    cancel for any other (answered already: the completion and the cancel crossed) is dropped, so
    neither set outgrows the assignments in progress."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[str] = set()
        self._cancelled: set[str] = set()

    def start(self, assignment_id: str) -> None:
        with self._lock:
            self._open.add(assignment_id)

    def cancel(self, assignment_id: str) -> bool:
        """Marks an open assignment cancelled; False when it is not open."""
        with self._lock:
            if assignment_id not in self._open:
                return False
            self._cancelled.add(assignment_id)
            return True

    def cancelled(self, assignment_id: str) -> bool:
        with self._lock:
            return assignment_id in self._cancelled

    def finish(self, assignment_id: str) -> bool:
        """Forgets an assignment; True when it was cancelled (its completion is not sent)."""
        with self._lock:
            self._open.discard(assignment_id)
            if assignment_id not in self._cancelled:
                return False
            self._cancelled.discard(assignment_id)
            return True

    def sizes(self) -> tuple[int, int]:
        """How many ids are held: open, cancelled."""
        with self._lock:
            return len(self._open), len(self._cancelled)


def serve(stubs, connection: dispatch_connection.Connection, worker_id: str, stopping: threading.Event, current: dict):
    """Hosts TOOLS on one Work stream until it ends; gives its status code and details."""
    pb, tool_pb = stubs.worker_pb2, stubs.tool_pb2
    outbox: "queue.Queue[object]" = queue.Queue()
    current["outbox"] = outbox
    ended = threading.Event()
    assignments = Assignments()
    current["assignments"] = assignments

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
        # Cancelled while it waited for a thread: the tool does not run.
        if assignments.cancelled(assignment.assignment_id):
            assignments.finish(assignment.assignment_id)
            return
        try:
            output, is_error = TOOLS[assignment.call.name](json.loads(assignment.call.arguments)), False
        except Exception as error:  # the tool's failure is reported to dispatch, not raised
            output, is_error = f"{type(error).__name__}: {error}", True
        if assignments.finish(assignment.assignment_id):
            return
        completion = pb.Completion(assignment_id=assignment.assignment_id, output=output, is_error=is_error, error_message=output if is_error else "")
        outbox.put(pb.WorkerMessage(completion=completion))
        say(f"completed {assignment.call.name} call={assignment.call.id} attempt={assignment.attempt} error={is_error}")

    spec = tool_pb.ToolSpec(
        name="py_word_count",
        description="Counts the words of a text (hosted by a Python worker).",
        input_schema=json.dumps(SCHEMA),
        effect=tool_pb.EFFECT_READ_ONLY,
        concurrency_safe=True,
        timeout_ms=5000,
    )
    # The channel receives up to MAX_RECEIVE_BYTES: said in hello, dispatch sends assignments up to
    # that (without it, up to what its limits.worker_receive_bytes assumes, 4 MiB by default, gRPC's default).
    hello = pb.Hello(worker_id=worker_id, tools=[spec], max_receive_message_bytes=dispatch_connection.MAX_RECEIVE_BYTES)
    outbox.put(pb.WorkerMessage(hello=hello))
    if stopping.is_set():
        outbox.put(None)
    threading.Thread(target=heartbeats, daemon=True).start()
    once = threading.Lock()

    def accepted() -> None:
        if not ended.is_set() and once.acquire(blocking=False):
            say(f"worker {worker_id} hosting {', '.join(TOOLS)} on {connection.address}{' (TLS)' if connection.tls else ''}")

    timer = threading.Timer(ACCEPTED_AFTER_SECONDS, accepted)
    timer.daemon = True
    try:
        with connection.channel() as channel, ThreadPoolExecutor(max_workers=8) as pool:
            stream = stubs.worker_pb2_grpc.WorkerServiceStub(channel).Work(outgoing(), metadata=connection.metadata)
            timer.start()
            try:
                for assignment in stream:
                    accepted()
                    if not assignment.cancel:
                        assignments.start(assignment.assignment_id)
                        pool.submit(run, assignment)
                    elif assignments.cancel(assignment.assignment_id):
                        say(f"cancelled {assignment.assignment_id}")
                return stream.code(), stream.details()
            except grpc.RpcError as error:
                return error.code(), error.details()
    finally:
        ended.set()
        timer.cancel()
        outbox.put(None)  # ends the request iterator, should the stream have ended first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address")
    parser.add_argument("--id", default="python-worker")
    args = parser.parse_args()

    try:
        connection = dispatch_connection.resolve(args.address)
    except dispatch_connection.SettingError as error:
        print(f"worker.py: {error}", file=sys.stderr)
        return 2
    stubs = dispatch_stubs.load()
    stopping = threading.Event()
    current: dict = {}

    def stop(*_):
        if stopping.is_set():
            return
        stopping.set()
        if "outbox" not in current:
            return
        # Drain: dispatch sends nothing new; the stream is half-closed (dispatch then ends it) once
        # every held call is answered, at most DRAIN_SECONDS, so none is cut off as "disconnected".
        outbox, assignments = current["outbox"], current["assignments"]
        outbox.put(stubs.worker_pb2.WorkerMessage(drain=stubs.worker_pb2.Drain()))

        def close_when_answered() -> None:
            until = time.monotonic() + DRAIN_SECONDS
            while assignments.sizes()[0] > 0 and time.monotonic() < until:
                time.sleep(0.05)
            outbox.put(None)

        threading.Thread(target=close_when_answered, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A new stream whenever one ends other than by stop (dispatchd restarted or drained, the
    # connection lost), after a wait drawn at random up to a bound that doubles (full jitter), and
    # starts over after a stream that lasted a minute.
    bound = FIRST_BACKOFF_SECONDS
    while True:
        opened = time.monotonic()
        code, details = serve(stubs, connection, args.id, stopping, current)
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
