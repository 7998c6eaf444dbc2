"""Stub of googleapis-common-protos' google/api/client.proto (see _empty.py)."""

from google.api._empty import register

DESCRIPTOR = register("google/api/client.proto")
