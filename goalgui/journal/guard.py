"""Whether a file may be used as a journal, and what to say when it may not.

Checked before anything is written: a directory, a file that is not SQLite, another program's
SQLite database (told apart by SQLite's `application_id`, which goalgui sets), a file emptied
to 0 bytes. A damaged journal is recognised by SQLite's own error codes and named without any of
its content; once seen, nothing more is written into it. `check` runs SQLite's integrity check
and `recover` copies every run that can still be read into a new journal by replaying its
events.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..engine.recorder import SinkBusy

APPLICATION_ID = 0x47474A31  # "GGJ1": this file is a goalgui journal
HEADER = b"SQLite format 3\x00"
OUR_TABLES = {"runs", "events", "goals", "series", "texts", "controls", "watchers"}
_DAMAGE_CODES = {"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_INDEX", "SQLITE_CORRUPT_SEQUENCE",
                 "SQLITE_CORRUPT_VTAB"}


class JournalError(RuntimeError):
    """The journal cannot do what was asked (locked run, unknown id, newer schema)."""


class JournalDamaged(JournalError):
    """The file is a damaged journal: nothing more is written into it."""


class JournalBusy(JournalError, SinkBusy):
    """Another process holds the journal's write lock; nothing was written (try again later)."""


class NotAJournal(JournalError):
    """The file is something else; it is left as it is."""


def advice(path: Path) -> str:
    return (f"'goalgui journal check --journal {path}' says what is wrong and "
            f"'goalgui journal recover --journal {path} -o NEW' copies what can be read")


def damaged(path: Path, why: str = "") -> JournalDamaged:
    detail = f" ({why})" if why else ""
    return JournalDamaged(f"the journal {path} is damaged{detail}: {advice(path)}")


_CAUSES = {"SQLITE_FULL": "the disk is full", "SQLITE_READONLY": "it is read-only",
           "SQLITE_READONLY_DIRECTORY": "its folder is read-only", "SQLITE_IOERR": "an I/O error",
           "SQLITE_BUSY": "another process holds its write lock", "SQLITE_LOCKED": "it is locked",
           "SQLITE_CANTOPEN": "it cannot be opened", "SQLITE_PERM": "permission denied"}


def unwritable(path: Path, exc: BaseException) -> JournalError:
    """A write that failed for a cause outside the file's content, named in one line."""
    return JournalError(f"the journal {path} cannot be written: {_cause(exc)}; the run is kept as far as it was "
                        "written")


def _cause(exc: BaseException) -> str:
    name = getattr(exc, "sqlite_errorname", "") or ""
    cause = _CAUSES.get(name) or next((text for code, text in _CAUSES.items() if name.startswith(code)), None)
    if cause is None:  # SQLite's own words ("no such table: goals"); content is only quoted by damage errors
        cause = f"{name or type(exc).__name__}: {str(exc)[:120]}"
    return cause


def unreadable(path: Path, exc: BaseException) -> JournalError:
    """Opening or reading failed for a cause outside the file's content, named in one line."""
    return JournalError(f"the journal {path} cannot be read: {_cause(exc)}")


def unwritable_reason(path: Path) -> str | None:
    """Why an existing journal can only be read here, or None if it can be written. SQLite writes
    its -wal and -shm beside the file, so a folder that cannot be written makes it read-only too."""
    if not os.access(path, os.W_OK):
        return "it is read-only"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return "its folder is read-only"
    return None


def uri(path: Path, query: str) -> str:
    """An SQLite URI for `path` ('?' or '#' in a name would otherwise end it)."""
    return f"file:{quote(str(Path(path).absolute()))}?{query}"


def connect_to_read(path: Path, reason: str) -> sqlite3.Connection:
    """A read-only connection to a journal that cannot be written. In WAL mode SQLite reads through
    the -shm file; where that cannot be made (a read-only folder), the file is read as immutable,
    which is only right when no -wal holds changes not yet in the file."""
    args = dict(uri=True, check_same_thread=False, isolation_level=None, timeout=10)
    db = sqlite3.connect(uri(path, "mode=ro"), **args)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise JournalError(f"the journal {path} cannot be read: {reason}, and its latest changes are in {wal}, "
                           "which SQLite cannot open without writing beside it; copy both files to a folder "
                           "you can write")
    return sqlite3.connect(uri(path, "mode=ro&immutable=1"), **args)


def is_busy(exc: BaseException) -> bool:
    return (getattr(exc, "sqlite_errorname", "") or "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def busy(path: Path, *, waited: float | None = None) -> JournalBusy:
    how_long = f" for {waited:g} s" if waited else ""
    return JournalBusy(f"the journal {path} cannot be written: another process has held its write lock{how_long}")


def is_damage(exc: BaseException) -> bool:
    """True for SQLite errors that mean the file's content is broken (not busy, full or locked)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorname", "") in _DAMAGE_CODES:
        return True
    text = str(exc)
    return "malformed" in text or "not a database" in text or "Could not decode to UTF-8" in text


def damage_reason(exc: BaseException) -> str:
    """SQLite's error, without the journal content some of its messages quote."""
    if "Could not decode to UTF-8" in str(exc):
        return "a stored text is not valid UTF-8"
    return getattr(exc, "sqlite_errorname", "") or type(exc).__name__


def inspect_file(path: Path) -> bool:
    """Before opening: True if the journal is to be created. Raises for a path that cannot be one."""
    if path.is_dir():
        raise JournalError(f"the journal {path} is a directory; name a file")
    if not path.exists():
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(len(HEADER))
    except PermissionError:
        raise JournalError(f"the journal {path} cannot be read: permission denied") from None
    except OSError as exc:
        raise JournalError(f"the journal {path} cannot be read: {exc.strerror or exc}") from None
    if not head:
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            return False  # a journal in WAL mode whose file was never checkpointed
        raise damaged(path, "the file is empty: if it held runs they are gone; move it away to start anew")
    if head != HEADER[:len(head)] or len(head) < len(HEADER):
        raise NotAJournal(f"{path} is not a goalgui journal (not an SQLite file); it was left as it is")
    return False


def check_identity(db: sqlite3.Connection, path: Path) -> bool:
    """After connecting, before writing: True if the file is new (no tables). Raises NotAJournal for
    another program's database; an old goalgui journal (no application_id yet) is accepted."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    if app_id == APPLICATION_ID:
        return False
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables and app_id == 0:
        return True
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if app_id == 0 and {"runs", "events"} <= tables and tables <= OUR_TABLES and version >= 1:
        return False  # written by a goalgui from before the application_id
    raise NotAJournal(f"{path} is not a goalgui journal (it holds another program's tables); "
                      "it was left as it is: name another file")


def check(path: Path) -> list[str]:
    """SQLite's integrity check of a journal, opened read-only: [] when it is sound."""
    inspect_file(path)
    try:
        db = connect_to_read(path, unwritable_reason(path) or "it is opened to read")
        try:
            check_identity(db, path)
            problems = [row[0] for row in db.execute("PRAGMA integrity_check") if row[0] != "ok"]
            if not problems:  # SQLite checks the structure, not what the rows say: read every event too
                db.text_factory = bytes
                bad = 0
                for (data,) in _readable(db, "SELECT data FROM events"):
                    try:
                        _json(data)
                    except ValueError:
                        bad += 1
                if bad:
                    problems.append(f"{bad} event(s) cannot be read")
            return problems
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return [f"the file cannot be read as a database ({damage_reason(exc)})"]


def recover(source: Path, target: Path) -> list[str]:
    """Copy every run of `source` that can be read into a new journal at `target`, replaying its events
    in order and keeping each run up to its first unreadable or inconsistent event. Lines to report."""
    from ..engine import events as ev
    from ..engine.record import RunRecord
    from .store import Journal

    if target.exists():
        raise JournalError(f"{target} exists: recover into a new file")
    inspect_file(source)
    db = connect_to_read(source, unwritable_reason(source) or "it is opened to read")
    db.text_factory = bytes  # a damaged text is then bytes to skip, not an error for the whole page
    report = []
    try:
        check_identity(db, source)
        try:
            texts = {h.decode(): t.decode("utf-8", "replace") for h, t in db.execute("SELECT hash, text FROM texts")}
        except sqlite3.DatabaseError:
            texts = {}
        run_ids = _readable(db, "SELECT DISTINCT run_id FROM events")
        out = Journal(target)
        try:
            for (raw_run_id,) in run_ids:
                run_id = raw_run_id.decode("utf-8", "replace")
                record, kept, lost = RunRecord(), [], 0
                for row in _readable(db, "SELECT seq, ts, type, data FROM events WHERE run_id=? ORDER BY seq",
                                     (run_id,)):  # a str: a bytes parameter matches no TEXT
                    try:
                        seq, ts, type_name, data = row
                        payload = _json(data)
                        if type_name == b"model_called":
                            payload["messages"] = [expand(m, lambda ref: texts.get(ref, "(lost in the damaged journal)"))
                                                  for m in payload["messages"]]
                        event = ev.from_payload(type_name.decode(), seq, ts, payload)
                        record.apply(event)
                    except Exception:  # unreadable, or not consistent with what came before
                        lost = 1
                        break
                    kept.append(event)
                if not kept or not isinstance(kept[0], ev.RunStarted):
                    report.append(f"run {run_id}: nothing readable")
                    continue
                for start in range(0, len(kept), 1000):
                    out.write(run_id, kept[start:start + 1000], record.snapshot())
                out.release(run_id)
                report.append(f"run {run_id}: {len(kept)} events" + (", cut at the first unreadable one" if lost else ""))
        finally:
            out.close()
    finally:
        db.close()
    return report


def _readable(db: sqlite3.Connection, sql: str, args: tuple = ()) -> list:
    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.DatabaseError:
        rows = []
        cursor = db.execute(sql, args)
        while True:  # row by row, up to where the damage stops the scan
            try:
                row = cursor.fetchone()
            except sqlite3.DatabaseError:
                return rows
            if row is None:
                return rows
            rows.append(row)


def _json(data: bytes):
    import json

    return json.loads(data.decode("utf-8"))


def expand(message: dict, text_of) -> dict:
    """A stored message with its text put back: stored texts are kept once, by hash, and a message
    names its own by `content_ref`; `text_of(digest)` finds it."""
    ref = message.get("content_ref") if isinstance(message, dict) else None
    if ref is None:
        return message
    out = {k: v for k, v in message.items() if k != "content_ref"}
    out["content"] = text_of(ref)
    return out
