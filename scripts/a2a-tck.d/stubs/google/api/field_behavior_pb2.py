"""Stub of googleapis-common-protos' google/api/field_behavior.proto (see _empty.py)."""

from google.api._empty import register

DESCRIPTOR = register("google/api/field_behavior.proto")
