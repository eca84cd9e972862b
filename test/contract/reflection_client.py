"""A standard server-reflection client, as grpcurl and Python's ProtoReflectionDescriptorDatabase
work: list the services, then let a fresh DescriptorPool pull each file (file_containing_symbol)
and every file it imports (file_by_filename) from the server, and build them. Prints JSON.
Usage: reflection_client.py ADDRESS (grpc.reflection.v1 only; no grpc_reflection package needed)."""
import json, sys
import grpc
from google.protobuf import descriptor_database, descriptor_pb2, descriptor_pool
from google.protobuf.internal.decoder import _DecodeVarint
from google.protobuf.internal.encoder import _VarintBytes

METHOD = '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo'


def field(number, payload):  # a length-delimited field of ServerReflectionRequest
    return _VarintBytes((number << 3) | 2) + _VarintBytes(len(payload)) + payload


def fields(data):
    """(number, bytes) of each length-delimited field of a message; varints skipped."""
    i = 0
    while i < len(data):
        tag, i = _DecodeVarint(data, i)
        if tag & 7 == 2:
            n, i = _DecodeVarint(data, i)
            yield tag >> 3, data[i:i + n]
            i += n
        else:
            _, i = _DecodeVarint(data, i)


class ReflectionDatabase(descriptor_database.DescriptorDatabase):
    def __init__(self, channel):
        super().__init__()
        self._call = channel.stream_stream(METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        self.asked = []

    def ask(self, number, value):
        self.asked.append(value)
        (reply,) = list(self._call(iter([field(number, value.encode())]), timeout=10))
        return dict((n, v) for n, v in fields(reply) if n != 2), reply

    def services(self):
        _, reply = self.ask(7, '*')
        return [dict(fields(s))[1].decode() for n, listed in fields(reply) if n == 6 for k, s in fields(listed) if k == 1]

    def _load(self, number, value):
        parts, reply = self.ask(number, value)
        if 7 in parts:
            raise KeyError(value)
        for n, response in fields(reply):
            if n == 4:
                for k, raw in fields(response):
                    proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
                    try:
                        super().FindFileByName(proto.name)
                    except KeyError:
                        self.Add(proto)

    def _find(self, find, number, value):
        """`find(value)` from what was loaded, else after asking the server (field `number`)."""
        try:
            return find(value)
        except KeyError:
            self._load(number, value)
            return find(value)

    def FindFileByName(self, name):
        return self._find(super().FindFileByName, 3, name)

    def FindFileContainingSymbol(self, symbol):
        return self._find(super().FindFileContainingSymbol, 4, symbol)


with grpc.insecure_channel(sys.argv[1]) as channel:
    db = ReflectionDatabase(channel)
    pool = descriptor_pool.DescriptorPool(db)
    out = {'services': sorted(db.services()), 'files': {}, 'methods': {}}
    for name in out['services']:
        service = pool.FindServiceByName(name)
        out['methods'][name] = [m.name for m in service.methods]
    for name in ('dispatch.v1.DispatchRequest', 'dispatch.v1.Event', 'dispatch.v1.ToolSpec', 'google.rpc.ErrorInfo'):
        message = pool.FindMessageTypeByName(name)
        out[name] = {f.name: (f.message_type.full_name if f.message_type else f.type) for f in message.fields}
    for name in db.asked:
        if name.endswith('.proto'):
            out['files'][name] = [d.name for d in pool.FindFileByName(name).dependencies]
    for name in ('dispatch/v1/dispatch.proto', 'dispatch/v1/registry.proto', 'dispatch/v1/worker.proto', 'google/rpc/status.proto', 'google/rpc/error_details.proto'):
        out['files'][name] = [d.name for d in pool.FindFileByName(name).dependencies]
    out['asked'] = db.asked
    # A symbol looked up alone, as `grpcurl describe SYMBOL` does: a fresh database asks the server
    # file_containing_symbol for it. An enum value is named as a sibling of its enum
    # (dispatch.v1.DISPATCH_MODE_PARALLEL), protobuf's scoping; None when the server knows no such symbol.
    out['containing'] = {}
    for symbol in ('dispatch.v1.DISPATCH_MODE_PARALLEL', 'dispatch.v1.EFFECT_READ_ONLY', 'dispatch.v1.EVENT_KIND_CALL_RECEIVED', 'google.rpc.RetryInfo', 'dispatch.v1.NO_SUCH_VALUE'):
        try:
            out['containing'][symbol] = descriptor_pool.DescriptorPool(ReflectionDatabase(channel)).FindFileContainingSymbol(symbol).name
        except KeyError:
            out['containing'][symbol] = None
    out['go_package'] = {name: pool.FindFileByName(name).GetOptions().go_package for name in ('dispatch/v1/dispatch.proto', 'dispatch/v1/registry.proto', 'dispatch/v1/tool.proto', 'dispatch/v1/worker.proto')}
    print(json.dumps(out))
