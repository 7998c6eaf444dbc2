"""Stub of googleapis-common-protos' google/rpc/error_details.proto (see _absent.py)."""

from google.rpc._absent import absent

__getattr__ = absent(__name__)
