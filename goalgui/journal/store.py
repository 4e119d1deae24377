"""The journal: an SQLite event store with projections, ownership leases and replay.

Every batch of events a run emits is one transaction: the events, the goals
projection (one row per goal, so a huge run opens without replaying it) and the
runs row (state, totals, owner) change together or not at all. WAL mode with
synchronous=NORMAL keeps every committed batch through a killed process.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..engine import events as ev
from ..engine.record import plot_marks
from . import guard
from .guard import JournalError
from .ownership import LEASE_SECONDS, Ownership
from .reading import Reading
from .migrate import READABLE_FROM, upgrade
from .schema import INDEXES, TABLES, SCHEMA_VERSION

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
WRITE_WAIT_MS = 3  # the longest a write waits for SQLite's write lock holding the connection
BUSY_SECONDS = 10.0  # how long a caller that may wait keeps trying for the write lock
CHECKPOINT_SECONDS = 0.5  # how often the WAL is copied back into the database

def _loop_running() -> bool:
    """True on a thread that runs an event loop (the engine's, qasync's in the window)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@dataclass(slots=True)
class _Batch:
    run_id: str
    rows: list
    texts: list
    goal_inserts: list
    goal_updates: list
    run_fields: dict
    tokens: int
    goals: int
    started: ev.RunStarted | None
    last_seq: int
    last_ts: float
    series: tuple | None
    text_edits: list




class Journal(Reading, Ownership):
    """One SQLite file of runs. Thread-safe for reads; writes come from the engine's thread."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        from ..paths import data_dir, private_dir, private_file, tighten

        # a directory, someone else's file, an emptied one: refused, left as they are
        new = guard.inspect_file(self.path)
        ours = self.path.parent == data_dir()
        # Where the file or its folder cannot be written (SQLite keeps its -wal and -shm beside the
        # file), the journal is opened to read: runs, export and the window still work.
        self.read_only: str | None = None if new else guard.unwritable_reason(self.path)
        if new:  # 0600 from its first byte: it holds prompts, results and tool output
            private_dir(self.path.parent, own=ours)
            self._create()
        self.damaged: str | None = None  # why, once SQLite said the file is damaged: no more writes
        try:
            if self.read_only:
                self._db = guard.connect_to_read(self.path, self.read_only)
            else:
                self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        except sqlite3.DatabaseError as exc:
            raise guard.unreadable(self.path, exc) from None
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if guard.is_damage(exc):
                raise guard.damaged(self.path, guard.damage_reason(exc)) from None
            raise guard.unreadable(self.path, exc) from None
        except JournalError:
            self._db.close()
            raise
        if not new and not self.read_only:  # a journal of ours from before: made private now
            # by mode alone: opening and closing the file here would drop this process's SQLite locks
            # on it (POSIX locks go with any close), and the next process to close would take the
            # WAL for unused and delete it under a live writer
            private_dir(self.path.parent, own=ours)
            tighten(self.path)
            for side in ("-wal", "-shm"):  # SQLite makes them with the file's mode: tighten old ones too
                tighten(Path(f"{self.path}{side}"))  # never created here: another process may be removing them
        self._checkpoint_wanted = threading.Event()
        self._closing = False
        self._checkpointer = threading.Thread(target=self._checkpoint_loop, name="goalgui-journal-checkpoint",
                                              daemon=True)
        if not self.read_only:
            self._checkpointer.start()

    def _create(self) -> None:
        """Make the journal file whole, then put it in place: another process opening it at that
        moment must never find a file of 0 bytes, which is what an emptied journal looks like. It
        is built beside its name and linked there (a link, unlike a rename, fails if another
        process got there first; then theirs is used)."""
        from ..paths import private_file

        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.new")
        private_file(temp)
        try:
            db = sqlite3.connect(temp, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")  # kept in the file's header
                db.executescript("BEGIN;" + TABLES + INDEXES + f"PRAGMA user_version={SCHEMA_VERSION};"
                                 f"PRAGMA application_id={guard.APPLICATION_ID}; COMMIT;")
            finally:
                db.close()
            try:
                os.link(temp, self.path)
            except FileExistsError:
                pass
        except OSError as exc:
            raise JournalError(f"the journal {self.path} cannot be made: {exc.strerror or exc}") from None
        finally:
            for leftover in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    def _open(self) -> None:
        self._lock = threading.RLock()
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self._owned: set[str] = set()
        self._text_hashes: dict[str, str] = {}
        self._texts_by_hash: dict[str, str] = {}
        with self._lock:
            self._db.execute("PRAGMA busy_timeout=10000")
            guard.check_identity(self._db, self.path)  # before the first write, WAL mode included
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise JournalError(f"{self.path} was written by a newer goalgui (schema {version})")
            if self.read_only:
                if version < READABLE_FROM:
                    raise JournalError(f"the journal {self.path} must be upgraded to schema {SCHEMA_VERSION} "
                                       f"first, which writes to it, and {self.read_only}")
                return
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on their own thread
            if version < SCHEMA_VERSION:
                upgrade(self, version)
            if self._db.execute("PRAGMA application_id").fetchone()[0] != guard.APPLICATION_ID:
                self._db.execute(f"PRAGMA application_id={guard.APPLICATION_ID}")

    def _checkpoint_loop(self) -> None:
        """Copy the WAL back into the database off the writer's thread. SQLite's automatic checkpoint
        runs inside the commit that crosses its threshold, which stalls the engine (and the window
        on the same thread) for 10 ms and more; here it waits for no one."""
        db = sqlite3.connect(self.path, isolation_level=None, timeout=10, check_same_thread=False)
        renewed = time.monotonic()
        try:
            while True:
                self._checkpoint_wanted.wait(CHECKPOINT_SECONDS)
                self._checkpoint_wanted.clear()
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    if time.monotonic() - renewed >= LEASE_SECONDS / 3:  # alive, even with no event to write
                        self.renew(db)
                        renewed = time.monotonic()
                except sqlite3.Error:  # busy or closing: the next round will do it
                    pass
                if self._closing:
                    return
        finally:
            db.close()

    def close(self) -> None:
        with self._lock:
            if self.read_only:
                self._db.close()
                return
            for run_id in list(self._owned):
                self.release(run_id)
            self._closing = True
            self._checkpoint_wanted.set()
            self._checkpointer.join(timeout=10)
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
            self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------

    def writable(self) -> None:
        """Raise, in one line, if nothing can be written here (a read-only file or folder)."""
        if self.read_only:
            raise JournalError(f"the journal {self.path} cannot be written: {self.read_only}; "
                               "it can be read (runs, export, the window)")

    def write(self, run_id: str, events: Sequence[ev.Event], snapshot: dict | None = None, *,
              wait: bool | None = None) -> None:
        """Commit one batch of a run's events with its projections, atomically. `snapshot`
        (the run's totals after the batch, `RunRecord.snapshot()`) goes into the plots' series.
        Raises JournalBusy, having written nothing, if another process holds the write lock and
        the caller may not wait (see `_transaction`)."""
        self.store(self.prepare(run_id, events, snapshot), wait)

    def _transaction(self, work, *, wait: bool | None = None):
        """`work(db)` in one write transaction on this journal's connection, its result returned.

        Another process may hold the write lock (a writer of its own, or a stuck one). The connection
        waits for it only a few ms (WRITE_WAIT_MS) and never sleeps holding the connection's lock.
        Then a caller that may not wait gets JournalBusy at once, with nothing written; by default
        that is any caller on a thread running an event loop (the engine's, the window's: it stays
        live, and the recorder tries again shortly). Others retry after growing pauses, up to
        BUSY_SECONDS, then get JournalBusy too."""
        if wait is None:
            wait = not _loop_running()
        deadline = time.monotonic() + BUSY_SECONDS
        pause = 0.005
        while True:
            with self._lock:
                db = self._db
                db.execute(f"PRAGMA busy_timeout={WRITE_WAIT_MS}")
                try:
                    try:
                        db.execute("BEGIN IMMEDIATE")
                    except sqlite3.OperationalError as exc:
                        if not guard.is_busy(exc):
                            raise
                    else:
                        try:
                            result = work(db)
                            db.execute("COMMIT")
                            return result
                        except BaseException:
                            if db.in_transaction:  # SQLite may have rolled back itself (a full disk): keep the cause
                                db.execute("ROLLBACK")
                            raise
                finally:
                    db.execute("PRAGMA busy_timeout=10000")  # reads may wait (a WAL being recovered)
            if not wait or time.monotonic() >= deadline:
                raise guard.busy(self.path, waited=BUSY_SECONDS if wait else None)
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def prepare(self, run_id: str, events: Sequence[ev.Event], snapshot: dict | None = None) -> _Batch:
        """The rows one batch writes (pure Python: encoding and projections), ready for `store`."""
        rows = []
        new: dict[str, list] = {}  # goals added in this batch: inserted once with their final fields
        changed: dict[str, list] = {}  # goals added earlier: [status, tokens, attempts, result_chars, note, children]
        run_fields: dict = {}
        tokens = goals = 0
        started = None
        new_texts: list[tuple[str, str]] = []
        marks: list = []
        edits: list[tuple[str, str, str]] = []  # (text, run, goal) of goals the operator edited

        for e in events:
            data = ev.payload(e)
            t = type(e)
            goal_id = None
            if t is ev.ModelCalled:
                data["messages"] = self._shrink(data["messages"], new_texts)
                spent = e.tokens_in + e.tokens_out
                tokens += spent
                goal_id = e.goal_id
                if goal_id:
                    self._project(new, changed, goal_id, tokens=spent)
            elif t is ev.GoalChanged:
                goal_id = e.goal_id
                self._project(new, changed, goal_id, status=e.status, attempts=e.attempts,
                              result_chars=None if e.result is None else len(e.result), note=e.note)
            elif t is ev.TurnStarted:
                goal_id = e.goal_id
                if goal_id is not None:
                    self._project(new, changed, goal_id, status="running")
            elif t is ev.GoalAdded:
                goal_id = e.goal_id
                goals += 1
                new[goal_id] = [e.seq, e.parent_id, e.depth, e.text, "pending", 0, 0, 0, "", 0]
                if e.parent_id is not None:
                    self._project(new, changed, e.parent_id, children=1)
            elif t is ev.RunStateChanged:
                run_fields["state"] = e.state
                run_fields["stop_reason"] = e.reason if e.state != "active" else None
                if e.outcome is not None:
                    run_fields["outcome"] = e.outcome
                if e.health is not None:
                    run_fields["health"] = json.dumps(e.health, separators=(",", ":"))
                marks.extend(plot_marks((e,)))
            elif t is ev.BudgetNudged or t is ev.LimitsChanged:
                marks.extend(plot_marks((e,)))
            elif t is ev.ToolCalled:
                goal_id = e.goal_id
            elif t is ev.GoalOverruled:
                goal_id = e.goal_id
                if e.action == "edit":  # the one change of a goal's text: its row is rewritten
                    if goal_id in new:
                        new[goal_id][3] = e.text
                    else:
                        edits.append((e.text, run_id, goal_id))
            elif t is ev.RunStarted:
                started = e
            rows.append((run_id, e.seq, e.ts, e.type, _encode(data), goal_id))
        last = events[-1]
        inserts = [(run_id, goal_id, *row) for goal_id, row in new.items()]
        updates = [(*change, run_id, goal_id) for goal_id, change in changed.items()]
        series = None
        if snapshot is not None or marks:
            series = (run_id, last.seq, _encode({**(snapshot or {}), "marks": marks}))
        return _Batch(run_id, rows, new_texts, inserts, updates, run_fields, tokens, goals, started,
                      last.seq, last.ts, series, edits)

    @staticmethod
    def _project(new: dict, changed: dict, goal_id: str, *, status=None, attempts=None,
                 result_chars=None, tokens=0, note=None, children=0) -> None:
        """Fold one change into the goal's pending row: its insert if it was added in this batch,
        else its update. Both end in [status, tokens, attempts, result_chars, note, children]."""
        row = new.get(goal_id)
        if row is not None:  # [ord, parent, depth, text, status, tokens, attempts, result_chars, note, children]
            at = 4
        else:
            row = changed.get(goal_id)
            if row is None:
                row = changed[goal_id] = [None, 0, None, None, None, 0]
            at = 0
        if status is not None:
            row[at] = status
        row[at + 1] += tokens
        if attempts is not None:
            row[at + 2] = attempts
        if result_chars is not None:
            row[at + 3] = result_chars
        if note is not None:
            row[at + 4] = note
        row[at + 5] += children

    def store(self, batch: _Batch, wait: bool | None = None) -> None:
        """Commit a prepared batch: events, projections and the run's row in one transaction.
        Never into a file SQLite said is damaged. See `_transaction` for `wait`."""
        if self.damaged:
            raise guard.damaged(self.path, self.damaged)
        self.writable()
        try:
            self._store(batch, wait)
        except sqlite3.DatabaseError as exc:
            if guard.is_damage(exc):
                self.damaged = guard.damage_reason(exc)
                raise guard.damaged(self.path, self.damaged) from None
            raise guard.unwritable(self.path, exc) from None

    def _store(self, batch: _Batch, wait: bool) -> None:
        run_id, started = batch.run_id, batch.started

        def work(db: sqlite3.Connection) -> None:
            if started is not None:
                db.execute(
                    "INSERT INTO runs (run_id, objective, strategy, model, state, started_at, updated_at,"
                    " owner_host, owner_pid, lease_until) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (run_id, started.objective, started.strategy, started.model, "active", started.ts,
                     started.ts, self._host, self._pid, time.time() + LEASE_SECONDS),
                )
            if batch.texts:
                db.executemany("INSERT OR IGNORE INTO texts (hash, text) VALUES (?,?)", batch.texts)
            db.executemany("INSERT INTO events (run_id, seq, ts, type, data, goal_id) VALUES (?,?,?,?,?,?)",
                           batch.rows)
            if batch.goal_inserts:
                db.executemany(
                    "INSERT INTO goals (run_id, goal_id, ord, parent_id, depth, text, status, tokens, attempts,"
                    " result_chars, note, children) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", batch.goal_inserts)
            if batch.goal_updates:
                db.executemany(
                    "UPDATE goals SET status=coalesce(?, status), tokens=tokens+?, attempts=coalesce(?, attempts),"
                    " result_chars=coalesce(?, result_chars), note=coalesce(?, note),"
                    " children=children+? WHERE run_id=? AND goal_id=?",
                    batch.goal_updates)
            if batch.text_edits:
                db.executemany("UPDATE goals SET text=? WHERE run_id=? AND goal_id=?", batch.text_edits)
            if batch.series is not None:
                db.execute("INSERT OR REPLACE INTO series (run_id, seq, data) VALUES (?,?,?)", batch.series)
            sets = ["updated_at=?", "last_seq=?", "tokens=tokens+?", "goals=goals+?"]
            args: list = [batch.last_ts, batch.last_seq, batch.tokens, batch.goals]
            for name, value in batch.run_fields.items():
                sets.append(f"{name}=?")
                args.append(value)
            if run_id in self._owned or started is not None:
                sets.append("lease_until=?")
                args.append(time.time() + LEASE_SECONDS)
            db.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id=?", (*args, run_id))

        try:
            self._transaction(work, wait=wait)
        except BaseException:
            for _digest, content in batch.texts:  # not stored after all: store it next time
                self._text_hashes.pop(content, None)
            raise
        if started is not None:
            self._owned.add(run_id)

    # Fixed instructions (system messages) are the same in thousands of calls: the journal
    # keeps each once, by hash, and events refer to it.

    def _shrink(self, messages: list, new_texts: list) -> list:
        out = []
        for m in messages:
            content = m.get("content")
            if m.get("role") == "system" and isinstance(content, str) and len(content) >= 64:
                digest = self._text_hashes.get(content)
                if digest is None:
                    digest = hashlib.blake2b(content.encode(), digest_size=12).hexdigest()
                    self._text_hashes[content] = digest
                    new_texts.append((digest, content))
                m = {k: v for k, v in m.items() if k != "content"}
                m["content_ref"] = digest
            out.append(m)
        return out

