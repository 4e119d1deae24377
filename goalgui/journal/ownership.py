"""Which process drives a run, and requests to it from other processes.

A driver holds a lease on its run (30 s, renewed every 10 s by the journal's checkpoint thread
while the process lives, and with every batch it writes). Claiming is one transaction that
checks and takes the lease; a lease that ran out is free whatever its PID says. Other processes
ask the driver to pause, cancel or skip through the controls table, which it polls; a request
it never took is withdrawn, never obeyed later.

A mixin of `Journal`: it uses the journal's connection, lock, host and pid.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time

from ..engine.lifecycle import InputError
from ..engine.record import RunRecord
from .guard import JournalBusy, JournalError

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
WATCH_SECONDS = 3.0  # an attached window says it is there every second; this old, it is gone
CLOCK_SLACK_SECONDS = 5.0  # a word dated this far ahead of this clock is still believed
STALE_WATCHER_SECONDS = 60.0  # words this old are cleared


class RunBusy(JournalError):
    """Another live process drives this run."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Ownership:
    # -- ownership ------------------------------------------------------------

    def claim(self, run_id: str) -> None:
        """Become the process that drives `run_id`; refuse if a live process already does.
        One transaction checks and takes the lease, so of two claims at once one wins. Control
        requests left for an earlier driver are withdrawn: they were meant for a process that
        is gone, and a cancel that was reported as failed must not take effect days later."""
        self.writable()

        def work(db: sqlite3.Connection) -> None:
            row = db.execute(
                "SELECT owner_host, owner_pid, lease_until FROM runs WHERE run_id=?", (run_id,)).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id}")
            if run_id not in self._owned and self._owner_alive(*row):
                raise RunBusy(f"run {run_id} is being driven by process {row[1]} on {row[0]}")
            now = time.time()
            db.execute("UPDATE runs SET owner_host=?, owner_pid=?, lease_until=? WHERE run_id=?",
                       (self._host, self._pid, now + LEASE_SECONDS, run_id))
            if run_id not in self._owned:
                db.execute("UPDATE controls SET taken_at=? WHERE run_id=? AND taken_at IS NULL", (-now, run_id))

        self._transaction(work)
        self._owned.add(run_id)

    def take(self, run_id: str, doing: str = "resume") -> RunRecord:
        """Claim `run_id`, then read it: read before the claim, a record could be one that another
        driver went on from meanwhile (and whose events would then collide). A final run (complete or
        cancelled) is released again with a one-line error."""
        self.claim(run_id)
        try:
            record = self.load(run_id)
            if record.state.final:
                raise InputError(f"run {run_id} is {record.state.value}: there is nothing to {doing}")
        except BaseException:
            self.release(run_id)
            raise
        return record

    def renew(self, db: sqlite3.Connection | None = None) -> None:
        """Extend the lease of every run this process drives (the checkpoint thread calls it)."""
        owned = list(self._owned)
        if not owned:
            return
        (db or self._db).execute(
            f"UPDATE runs SET lease_until=? WHERE owner_pid=? AND owner_host=? AND run_id IN ({','.join('?' * len(owned))})",
            (time.time() + LEASE_SECONDS, self._pid, self._host, *owned))

    def release(self, run_id: str) -> None:
        """Stop driving `run_id`. If the write lock is not to be had now, the lease, no longer
        renewed, runs out by itself."""
        self._owned.discard(run_id)
        if self.read_only:
            return
        try:
            self._transaction(lambda db: db.execute(
                "UPDATE runs SET owner_host=NULL, owner_pid=NULL, lease_until=NULL"
                " WHERE run_id=? AND owner_pid=? AND owner_host=?", (run_id, self._pid, self._host)))
        except JournalBusy:
            pass

    def _owner_alive(self, host, pid, lease_until) -> bool:
        """A live driver renews its lease every few seconds: one that has expired is free whatever
        its PID says (the PID may have been reused); on this host a dead PID frees it at once."""
        if pid is None or lease_until is None or lease_until <= time.time():
            return False
        if host == self._host:
            return pid != self._pid and _pid_alive(pid)
        return True

    # -- controls from other processes -----------------------------------------

    def request_control(self, run_id: str, action: str, **args) -> int:
        """Ask the process driving `run_id` to pause, resume, cancel or skip (it polls); the request's id."""
        self.writable()
        return self._transaction(lambda db: db.execute(
            "INSERT INTO controls (run_id, action, args, created_at) VALUES (?,?,?,?)",
            (run_id, action, json.dumps(args), time.time())).lastrowid)

    def control_taken(self, control_id: int) -> bool:
        """Whether the driver took the request (a withdrawn one is not taken)."""
        with self._lock:
            row = self._db.execute("SELECT taken_at FROM controls WHERE id=?", (control_id,)).fetchone()
        return bool(row and row[0] is not None and row[0] > 0)

    def withdraw_control(self, control_id: int) -> bool:
        """Take back a request nobody took; False if its driver took it meanwhile."""
        return self._transaction(lambda db: db.execute(
            "UPDATE controls SET taken_at=? WHERE id=? AND taken_at IS NULL", (-time.time(), control_id)).rowcount == 1)

    def take_controls(self, run_id: str) -> list[tuple[str, dict]]:
        """The control requests waiting for `run_id`, oldest first, marked taken. None now if
        another process holds the write lock and this thread may not wait (see `_transaction`)."""
        def work(db: sqlite3.Connection) -> list:
            rows = db.execute("SELECT id, action, args FROM controls WHERE run_id=? AND taken_at IS NULL ORDER BY id",
                              (run_id,)).fetchall()
            if rows:
                db.execute(f"UPDATE controls SET taken_at=? WHERE id IN ({','.join('?' * len(rows))})",
                           (time.time(), *[r[0] for r in rows]))
            return rows

        if self.read_only:
            return []
        try:
            rows = self._transaction(work)
        except JournalBusy:
            return []  # asked again at the next poll
        taken = []
        for control_id, action, args in rows:  # one bad row (another program's, a torn write) loses only itself
            try:
                decoded = json.loads(args)
                if not isinstance(decoded, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                log.warning("control request %s for run %s is not readable (%s): ignored", control_id, run_id,
                            type(exc).__name__)
                continue
            taken.append((action, decoded))
        return taken

    def owner_alive(self, run_id: str) -> bool:
        """True if another live process drives `run_id`."""
        with self._lock:
            row = self._db.execute(
                "SELECT owner_host, owner_pid, lease_until FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return row is not None and run_id not in self._owned and self._owner_alive(*row)

    # -- windows attached to a run another process drives ---------------------------

    def watch(self, run_id: str, watcher: str) -> None:
        """Say that `watcher` (an attached window) follows `run_id` now; said again every second
        or so while it does. The driver waits for such a window's answer to a confirmation. Words
        left by windows that went away long ago are cleared on the way."""
        self.writable()
        now = time.time()

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM watchers WHERE seen_at<?", (now - STALE_WATCHER_SECONDS,))
            db.execute("INSERT INTO watchers (run_id, watcher, host, pid, seen_at) VALUES (?,?,?,?,?)"
                       " ON CONFLICT (run_id, watcher) DO UPDATE SET seen_at=excluded.seen_at",
                       (run_id, watcher, self._host, self._pid, now))

        self._transaction(work)

    def unwatch(self, run_id: str, watcher: str) -> None:
        """`watcher` stopped following `run_id` (a window closed or went to another run)."""
        if self.read_only:
            return
        try:
            self._transaction(lambda db: db.execute("DELETE FROM watchers WHERE run_id=? AND watcher=?",
                                                    (run_id, watcher)))
        except JournalBusy:
            pass  # the row goes stale by itself

    def watchers(self, run_id: str, within: float = WATCH_SECONDS) -> int:
        """How many windows said within `within` seconds that they follow `run_id`. One whose last
        word is older, or dated ahead of this clock (a clock set back, another host's running
        ahead), or whose process on this host is gone (kill -9), does not count."""
        now = time.time()
        with self._lock:
            try:
                rows = self._db.execute("SELECT host, pid FROM watchers WHERE run_id=? AND seen_at>? AND seen_at<=?",
                                        (run_id, now - within, now + CLOCK_SLACK_SECONDS)).fetchall()
            except sqlite3.OperationalError as exc:  # a schema 3 journal opened to read: nobody can attach
                if "no such table" in str(exc):
                    return 0
                raise
        return sum(1 for host, pid in rows if host != self._host or pid == self._pid or _pid_alive(pid))
