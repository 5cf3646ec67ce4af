"""The base class of every error tilescope raises to the user (imports nothing of ours)."""

from __future__ import annotations


class TilescopeError(Exception):
    """Base class of every error tilescope raises to the user."""
