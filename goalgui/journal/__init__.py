"""The SQLite journal of runs."""

from .guard import JournalDamaged, JournalError, NotAJournal
from .store import Journal, RunBusy

__all__ = ["Journal", "JournalDamaged", "JournalError", "NotAJournal", "RunBusy"]
