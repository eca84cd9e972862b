"""Generates the dispatch.v1 Python stubs from ../../proto with grpc_tools and imports them, with
the google.rpc Status and ErrorInfo messages the repository ships (a hard error's reason travels in
them; Debian packages no grpcio-status).

Stubs are generated once per version of the .proto files into a cache directory (the system temp
directory, or DISPATCH_PY_STUBS), never committed. Run this file to generate them and print where.
The directory is made private (0700); one that another user owns or could write is refused, since
importing from it would run their code.
"""

import hashlib
import importlib
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile
import types

try:
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
except ImportError as missing:
    sys.exit(
        f"{missing}: the dispatch examples need grpcio and grpcio-tools; on Debian "
        "`apt-get install python3-grpcio python3-grpc-tools` and run them with /usr/bin/python3 "
        f"(this is {sys.executable}), or `pip install grpcio grpcio-tools`"
    )

PROTO_ROOT = pathlib.Path(__file__).resolve().parents[2] / "proto"
PROTO_FILES = sorted((PROTO_ROOT / "dispatch" / "v1").glob("*.proto")) + sorted((PROTO_ROOT / "google" / "rpc").glob("*.proto"))
MODULES = ("dispatch_pb2", "dispatch_pb2_grpc", "tool_pb2", "registry_pb2", "registry_pb2_grpc", "worker_pb2", "worker_pb2_grpc")
# google.rpc: no __init__.py at google/, which stays a namespace package shared with google.protobuf.
RPC_MODULES = ("status_pb2", "error_details_pb2")


def _stub_dir() -> pathlib.Path:
    configured = os.environ.get("DISPATCH_PY_STUBS")
    if configured:
        return pathlib.Path(configured)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in PROTO_FILES)).hexdigest()[:16]
    # One per user: each user's is private to them (see _check_private).
    user = f"{os.getuid()}-" if hasattr(os, "getuid") else ""
    return pathlib.Path(tempfile.gettempdir()) / f"dispatch-py-stubs-{user}{digest}"


def _check_private(target: pathlib.Path) -> None:
    """Refuses a stub directory that another user owns or can write: its modules get imported."""
    info = os.stat(target)
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeError(f"the stub directory {target} is not a directory; remove it or set DISPATCH_PY_STUBS")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise RuntimeError(f"refusing the stub directory {target}: it belongs to uid {info.st_uid}, not to this user (uid {os.getuid()}), who could have put code there; remove it or set DISPATCH_PY_STUBS")
    if info.st_mode & 0o022:
        raise RuntimeError(f"refusing the stub directory {target}: it is group- or world-writable (mode {stat.S_IMODE(info.st_mode):o}), so others could have put code there; remove it or set DISPATCH_PY_STUBS")


def _complete(target: pathlib.Path) -> bool:
    return (target / "dispatch" / "v1" / "worker_pb2_grpc.py").exists() and (target / "google" / "rpc" / "error_details_pb2.py").exists()


def generate() -> pathlib.Path:
    """Generates the stubs unless they exist; safe when several processes start at once."""
    target = _stub_dir()
    if os.path.lexists(target):
        _check_private(target)
        if _complete(target):
            return target
        if (target / "dispatch").exists():
            raise RuntimeError(f"the stub directory {target} holds stubs of an older version (no google/rpc); remove it")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Beside the target (mode 0700), so that the rename below stays on one filesystem.
    staging = pathlib.Path(tempfile.mkdtemp(prefix=".dispatch-py-stubs-", dir=target.parent))
    command = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"--python_out={staging}", f"--grpc_python_out={staging}"]
    subprocess.run(command + [str(p) for p in PROTO_FILES], check=True)
    for package in (staging / "dispatch", staging / "dispatch" / "v1", staging / "google" / "rpc"):
        (package / "__init__.py").touch()
    try:
        os.rename(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not _complete(target):
            raise
    # Checked again: another process may have put the directory there first.
    _check_private(target)
    return target


def load() -> types.SimpleNamespace:
    """The generated modules, by name (dispatch_pb2, worker_pb2_grpc, ..., status_pb2, error_details_pb2)."""
    path = str(generate())
    if path not in sys.path:
        sys.path.insert(0, path)
    modules = {name: importlib.import_module(f"dispatch.v1.{name}") for name in MODULES}
    modules.update({name: importlib.import_module(f"google.rpc.{name}") for name in RPC_MODULES})
    return types.SimpleNamespace(**modules)


if __name__ == "__main__":
    try:
        print(generate())
    except RuntimeError as error:
        sys.exit(f"dispatch_stubs: {error}")
