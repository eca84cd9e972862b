"""How the examples reach dispatchd, as dispatchctl does: the address, the bearer token, TLS and
keepalive pings, from --address and these environment variables (an empty one counts as unset):

    DISPATCH_ADDRESS                  HOST:PORT or another gRPC target (default 127.0.0.1:50051)
    DISPATCH_TOKEN                    a bearer token, sent as `authorization: Bearer ...`
    DISPATCH_TLS=1                    TLS, the server verified against gRPC's default roots
    DISPATCH_TLS_CA=FILE              TLS, the server verified against this PEM bundle
    DISPATCH_TLS_CERT / _KEY=FILE     TLS, presenting this certificate and key (mutual TLS)
    DISPATCH_ALLOW_PLAINTEXT_TOKEN=1  sends the token without TLS beyond loopback
    DISPATCH_KEEPALIVE_MS             pings every so many ms while a call is open (30000; 0: none)
    DISPATCH_KEEPALIVE_TIMEOUT_MS     how long a ping may go unanswered (10000)

A token is never sent in plaintext to a target beyond this machine unless allowed: it would cross
the network readable by anyone on the path.
"""

import dataclasses
import errno
import ipaddress
import json
import os
import re
import ssl
from collections.abc import Mapping

import grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_KEEPALIVE_MS = 30_000
DEFAULT_KEEPALIVE_TIMEOUT_MS = 10_000
# gRPC core reads channel arguments as C ints.
MAX_MS = 2**31 - 1
# dispatchd answers a turn with all its results in one message, up to its limits.max_response_bytes
# (4 MiB unless raised); gRPC core refuses a message over 4 MiB by default, which would lose the
# results of a turn whose side effects had run. 64 MiB, as dispatch's own TypeScript client.
MAX_RECEIVE_BYTES = 64 * 1024 * 1024
# gRPC's standard retry (a service config): a call dispatchd refused UNAVAILABLE (SHUTTING_DOWN: it
# is draining, a rolling update) or RESOURCE_EXHAUSTED (OVERLOADED: too many turns in flight,
# nothing run) is sent again as it was: in the same session_id with the same arguments, a
# side-effecting call that did run is replayed from its idempotency record rather than run twice
# (the key is the session, tool and key arguments; a tool_call_id is no part of it). At most 4
# attempts, all within the call's deadline. ParseToolCalls' RESOURCE_EXHAUSTED (an answer too
# large) would come again, so only UNAVAILABLE is retried there.
_RETRY = {"maxAttempts": 4, "initialBackoff": "0.5s", "maxBackoff": "4s", "backoffMultiplier": 2}
RETRY_SERVICE_CONFIG = json.dumps({
    "methodConfig": [
        {"name": [{"service": "dispatch.v1.DispatchService", "method": m} for m in ("Dispatch", "ReadResult")],
         "retryPolicy": {**_RETRY, "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}},
        {"name": [{"service": "dispatch.v1.DispatchService", "method": m} for m in ("ParseToolCalls", "EndSession")],
         "retryPolicy": {**_RETRY, "retryableStatusCodes": ["UNAVAILABLE"]}},
    ]
})
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.enable_retries", 1),
    ("grpc.service_config", RETRY_SERVICE_CONFIG),
)


class SettingError(Exception):
    """A setting that cannot be used; the message names it (and never shows the token)."""


@dataclasses.dataclass(frozen=True)
class Connection:
    """Where and how to reach dispatchd; `channel()` opens a new channel each time it is called."""

    address: str
    metadata: tuple[tuple[str, str], ...]
    credentials: grpc.ChannelCredentials | None
    # CHANNEL_OPTIONS and the keepalive pings.
    options: tuple[tuple[str, int | str], ...]

    @property
    def tls(self) -> bool:
        return self.credentials is not None

    def channel(self) -> grpc.Channel:
        if self.credentials is None:
            return grpc.insecure_channel(self.address, options=self.options)
        return grpc.secure_channel(self.address, self.credentials, options=self.options)


def resolve(argv_address: str | None, env: Mapping[str, str] = os.environ) -> Connection:
    """The connection from --address and the environment; raises SettingError on a bad setting,
    before anything connects."""
    address = argv_address or _setting(env, "DISPATCH_ADDRESS") or DEFAULT_ADDRESS
    token = _bearer_token(env)
    options = CHANNEL_OPTIONS + _keepalive_options(env)
    ca, cert, key = (_setting(env, f"DISPATCH_TLS_{name}") for name in ("CA", "CERT", "KEY"))
    if (cert is None) != (key is None):
        raise SettingError("DISPATCH_TLS_CERT and DISPATCH_TLS_KEY must be given together")
    tls = _flag(env, "DISPATCH_TLS") or ca is not None or cert is not None
    if token is not None and not tls and not _flag(env, "DISPATCH_ALLOW_PLAINTEXT_TOKEN") and not is_local_target(address):
        raise SettingError(
            f"refusing to send the token in plaintext to {address}, which is not a loopback address (127.0.0.0/8, ::1, localhost): "
            "set DISPATCH_TLS=1 (gRPC's default roots) or DISPATCH_TLS_CA=FILE, "
            "or DISPATCH_ALLOW_PLAINTEXT_TOKEN=1 when the connection is protected otherwise (a service mesh, a tunnel)"
        )
    metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
    return Connection(address, metadata, _tls_credentials(ca, cert, key) if tls else None, options)


def _setting(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return None if value == "" else value


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = _setting(env, name)
    if value not in (None, "0", "1"):
        raise SettingError(f"{name} must be 1 or 0, got {value!r}")
    return value == "1"


def _milliseconds(env: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    text = _setting(env, name)
    if text is None:
        return default
    if not re.fullmatch(r"\s*[0-9]+\s*", text, re.ASCII) or not minimum <= int(text) <= MAX_MS:
        raise SettingError(f"{name} must be a whole number of milliseconds from {minimum} to {MAX_MS}, got {text!r}")
    return int(text)


def _keepalive_options(env: Mapping[str, str]) -> tuple[tuple[str, int], ...]:
    """Channel options that ping dispatchd every DISPATCH_KEEPALIVE_MS while a call is open, with
    DISPATCH_KEEPALIVE_TIMEOUT_MS to answer: a call or stream on a connection whose server vanished
    without closing it (half-open) then fails UNAVAILABLE instead of waiting for ever, and the worker
    opens a new stream. gRPC core keeps pinging a connection that dispatchd is draining and dispatchd
    answers, so the calls still running on it finish (the grpc-js client differs: see dispatch's
    KEEPALIVE_CHANNEL_OPTIONS)."""
    every = _milliseconds(env, "DISPATCH_KEEPALIVE_MS", DEFAULT_KEEPALIVE_MS, 0)
    timeout = _milliseconds(env, "DISPATCH_KEEPALIVE_TIMEOUT_MS", DEFAULT_KEEPALIVE_TIMEOUT_MS, 1)
    if every == 0:
        return ()
    return (
        ("grpc.keepalive_time_ms", every),
        ("grpc.keepalive_timeout_ms", timeout),
        # Pings go on however long the stream sends nothing (the gRPC core stops after 2 by default).
        ("grpc.http2.max_pings_without_data", 0),
    )


def _bearer_token(env: Mapping[str, str]) -> str | None:
    """DISPATCH_TOKEN without surrounding whitespace (a newline left by `$(cat file)`), or None."""
    token = (env.get("DISPATCH_TOKEN") or "").strip()
    if not token:
        return None
    bad = re.search(r"[^\x21-\x7e]", token)
    if bad:
        c = bad.group()
        what = "whitespace" if c.isspace() else "a control character" if c < " " or c == "\x7f" else "a non-ASCII character"
        raise SettingError(f"the token in DISPATCH_TOKEN holds {what} at position {bad.start() + 1}; a bearer token is visible ASCII (the token is not shown)")
    return token


def is_loopback_host(host: str) -> bool:
    """True for a literal loopback IP (127.0.0.0/8 in dotted quads, ::1 in any spelling, IPv4-mapped
    ones too) or the name `localhost`; any other name is not (`127.attacker.example` is a DNS name),
    nor is a shorthand such as `127.1`."""
    bare = host.removeprefix("[").removesuffix("]")
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return bare.lower() == "localhost"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def is_local_target(target: str) -> bool:
    """True when every address of a gRPC target stays on this machine: HOST:PORT or `dns:` with a
    loopback host, `ipv4:`/`ipv6:` lists of loopback addresses, or a Unix socket."""
    if re.match(r"unix(-abstract)?:", target):
        return True
    listed = re.fullmatch(r"ipv[46]:(.*)", target)
    addresses = listed.group(1).split(",") if listed else [re.sub(r"^dns:(//[^/]*/)?", "", target)]
    return all(is_loopback_host(a if _is_ip(a) else re.sub(r":\d+$", "", a)) for a in addresses)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _read(name: str, path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        code = errno.errorcode.get(error.errno, error.strerror) if error.errno else str(error)
        raise SettingError(f"cannot read {name} {path} ({code})") from None


def _check_certificates(pem: bytes, path: str) -> None:
    """Refuses a PEM bundle without whole certificates that parse: gRPC would take it and then fail
    every handshake, and the worker would retry for ever."""
    text = pem.decode("latin-1")
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----", text)
    if text.count("-----BEGIN CERTIFICATE-----") != len(blocks):
        raise SettingError(f"a certificate in {path} is cut off")
    if not blocks:
        raise SettingError(f"no PEM certificate in {path}")
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cadata="\n".join(blocks))
    except ssl.SSLError:
        raise SettingError(f"a certificate in {path} does not parse") from None


def _check_identity(cert: str, key: str) -> None:
    def encrypted() -> bytes:
        raise SettingError(f"the private key in {key} is encrypted; gRPC takes only an unencrypted key")

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(cert, key, password=encrypted)
    except ssl.SSLError as error:
        if error.reason == "KEY_VALUES_MISMATCH":
            raise SettingError(f"the private key in {key} does not match the certificate in {cert}") from None
        raise SettingError(f"no usable private key in {key}") from None


def _tls_credentials(ca: str | None, cert: str | None, key: str | None) -> grpc.ChannelCredentials:
    """The server verified against `ca` (else gRPC's default roots: GRPC_DEFAULT_SSL_ROOTS_FILE_PATH,
    or the bundle grpcio carries), `cert` and `key` presented (mutual TLS)."""
    ca_pem = None if ca is None else _read("DISPATCH_TLS_CA", ca)
    if ca_pem is not None:
        _check_certificates(ca_pem, ca)
    if cert is None or key is None:
        return grpc.ssl_channel_credentials(root_certificates=ca_pem)
    cert_pem, key_pem = _read("DISPATCH_TLS_CERT", cert), _read("DISPATCH_TLS_KEY", key)
    _check_certificates(cert_pem, cert)
    _check_identity(cert, key)
    return grpc.ssl_channel_credentials(root_certificates=ca_pem, private_key=key_pem, certificate_chain=cert_pem)
