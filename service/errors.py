"""Errors of the service layer, printed to users as one line."""

from __future__ import annotations


class UsageError(Exception):
    """Bad command-line input or configuration: printed as one line, exit status 2."""
