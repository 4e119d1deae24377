"""The SQLite journal of runs."""

from .guard import JournalBusy, JournalDamaged, JournalError, NotAJournal
from .ownership import RunBusy
from .store import Journal

__all__ = ["Journal", "JournalBusy", "JournalDamaged", "JournalError", "NotAJournal", "RunBusy"]
