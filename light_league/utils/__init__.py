"""Small shared helpers: crash-safe file writes and an append-only JSONL log."""

from light_league.utils.atomic import (
    JsonlLog,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    read_json,
)

__all__ = ["JsonlLog", "atomic_write_bytes", "atomic_write_json", "atomic_write_text", "read_json"]
