"""A module whose every attribute says that googleapis-common-protos is absent.

The A2A 1.0 kit imports google.rpc at import time for its gRPC error
validator only; the agent declares no gRPC interface, so no test reaches it.
If one ever does, it fails with this message rather than passing.
"""


def absent(module):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(
            f"{module}.{name}: googleapis-common-protos is not installed "
            "(scripts/a2a-tck.d/stubs); the gRPC binding cannot be tested"
        )

    return __getattr__
