"""Stub of googleapis-common-protos' google/api/annotations.proto (see _empty.py)."""

from google.api._empty import register

DESCRIPTOR = register("google/api/annotations.proto")
