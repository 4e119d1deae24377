"""Upgrading a journal written by an older goalgui, once, when a writer opens it.

Each step is one transaction that ends at the next schema version, so a step that fails (a full
disk, a killed process) leaves the journal at the version before it, whole, to be tried again.

- 1 to 2: events learn their goal, goals their note and number of children, and every run gets
  the series its plots read (rebuilt by replaying it).
- 2 to 3: each run keeps the health figures of its last stop beside its state.
- 3 to 4: the `watchers` table (windows attached to a run another process drives).
"""

from __future__ import annotations

import sys

from ..engine import events as ev
from ..engine.record import RunRecord
from .schema import GOAL_EVENTS, INDEXES, TABLES

# a reader (opened read-only) can use a journal from this schema on: 4 only added a table whose
# absence reads as "no window attached"
READABLE_FROM = 3


def upgrade(journal, version: int) -> None:
    """Bring `journal` (open to write, at `version`) to the current schema, step by step."""
    if version == 1:
        _from_1(journal)
        version = 2
    if version == 2:
        _from_2(journal)
        version = 3
    if version == 3:
        _step(journal, 4, _create_missing)


def _step(journal, to: int, work) -> None:
    db = journal._db
    db.execute("BEGIN IMMEDIATE")
    try:
        work(db)
        db.execute(f"PRAGMA user_version={to}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _create_missing(db) -> None:
    """The tables and indexes a newer schema added (each statement is IF NOT EXISTS)."""
    for statement in TABLES.split(";") + INDEXES.split(";"):
        if statement.strip():
            db.execute(statement)


def _from_2(journal) -> None:
    def work(db) -> None:
        db.execute("ALTER TABLE runs ADD COLUMN health TEXT")
        db.execute("UPDATE runs SET health=(SELECT json_extract(e.data, '$.health') FROM events e"
                   " WHERE e.run_id=runs.run_id AND e.type='run_state_changed'"
                   " AND json_type(e.data, '$.health')='object' ORDER BY e.seq DESC LIMIT 1)")

    _step(journal, 3, work)


def _from_1(journal) -> None:
    print(f"goalgui: upgrading the journal {journal.path} to schema 2 (once; a big journal takes "
          "a while)", file=sys.stderr)

    def work(db) -> None:
        db.execute("ALTER TABLE events ADD COLUMN goal_id TEXT")
        db.execute("UPDATE events SET goal_id=json_extract(data, '$.goal_id') WHERE type IN (%s)"
                   % ",".join("'%s'" % t for t in GOAL_EVENTS))
        db.execute("ALTER TABLE goals ADD COLUMN note TEXT NOT NULL DEFAULT ''")
        db.execute("ALTER TABLE goals ADD COLUMN children INTEGER NOT NULL DEFAULT 0")
        db.execute("UPDATE goals SET children=(SELECT count(*) FROM goals c"
                   " WHERE c.run_id=goals.run_id AND c.parent_id=goals.goal_id)")
        _create_missing(db)  # the series table, among what later schemas added
        for (run_id,) in db.execute("SELECT run_id FROM runs").fetchall():
            record, series = RunRecord(), []
            chunk: list[ev.Event] = []
            for event in journal._select_events("run_id=?", [run_id], None):
                record.apply(event)
                chunk.append(event)
                if event.ts - chunk[0].ts >= 0.02:
                    series.append(journal.prepare(run_id, chunk, record.snapshot()).series)
                    chunk = []
            if chunk:
                series.append(journal.prepare(run_id, chunk, record.snapshot()).series)
            db.executemany("INSERT OR REPLACE INTO series (run_id, seq, data) VALUES (?,?,?)", series)
            db.executemany("UPDATE goals SET note=? WHERE run_id=? AND goal_id=?",
                           [(g.note, run_id, g.id) for g in record.goals.values() if g.note])

    _step(journal, 2, work)
