"""The SQLite journal of runs."""

from .guard import JournalDamaged, JournalError, NotAJournal
from .ownership import RunBusy
from .store import Journal

__all__ = ["Journal", "JournalDamaged", "JournalError", "NotAJournal", "RunBusy"]
