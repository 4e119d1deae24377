"""The SQLite journal of runs."""

from .store import Journal, JournalError, RunBusy

__all__ = ["Journal", "JournalError", "RunBusy"]
