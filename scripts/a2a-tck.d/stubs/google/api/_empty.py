"""Registers an empty proto file by name in the default descriptor pool.

The A2A 1.0 kit's generated a2a_pb2 declares google/api/*.proto as
dependencies for its options only (HTTP bindings, method signatures, field
behaviour). Those options stay readable as unknown fields; the gRPC binding,
the only code that would interpret them, is not exercised because the agent
declares no gRPC interface. Debian has no googleapis-common-protos, so each
stub registers its file empty, which is all that loading a2a.proto needs.
"""

from google.protobuf import descriptor_pb2, descriptor_pool


def register(name):
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(name)
    except KeyError:
        pass
    fdp = descriptor_pb2.FileDescriptorProto(
        name=name,
        package="google.api",
        syntax="proto3",
        dependency=["google/protobuf/descriptor.proto"],
    )
    return pool.AddSerializedFile(fdp.SerializeToString())
