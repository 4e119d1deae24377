"""Reading the journal: runs, events a page at a time, the goals projection, series, replay.

A mixin of `Journal` (it uses the journal's connection, lock and ownership): everything here
only reads, so it works on a journal opened read-only too.
"""

from __future__ import annotations

import json
from typing import Iterator

from ..engine import events as ev
from ..engine.lifecycle import InputError, RunState
from ..engine.record import INTERRUPTED, REUSED, Goal, GoalStatus, RunRecord, interruption
from . import guard
from .guard import JournalError

READ_PAGE = 5000  # events read from SQLite at a time


class Reading:
    def resolve(self, prefix: str) -> str:
        """The run id that `prefix` names (an id or a unique prefix of one)."""
        prefix = prefix.strip()
        if not prefix:
            raise InputError("no run id given")
        with self._lock:
            rows = self._db.execute(
                "SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ? ORDER BY run_id LIMIT 3",
                (prefix, prefix + "\uffff"),
            ).fetchall()
        if not rows:
            raise InputError(f"no run matches {prefix!r}: see 'goalgui runs'")
        if len(rows) > 1 and rows[0][0] != prefix:
            raise InputError(f"{prefix!r} matches several runs; give more of the id")
        return rows[0][0]

    def runs(self, run_id: str | None = None) -> list[dict]:
        """Every run (or the one named), newest first; an active run whose owner is gone shows as paused."""
        sql = ("SELECT run_id, objective, strategy, state, stop_reason, started_at, updated_at, tokens, goals,"
               " owner_host, owner_pid, lease_until, outcome, model, last_seq, health FROM runs")
        with self._lock:
            if run_id is None:
                rows = self._db.execute(sql + " ORDER BY started_at DESC, run_id").fetchall()
            else:
                rows = self._db.execute(sql + " WHERE run_id=?", (run_id,)).fetchall()
        out = []
        for r in rows:
            state, reason = r[3], r[4]
            alive = r[0] not in self._owned and self._owner_alive(r[9], r[10], r[11])
            if state == RunState.ACTIVE.value and not alive and r[0] not in self._owned:
                state, reason = RunState.PAUSED.value, INTERRUPTED
            # a live process that is not this one drives it (or holds it paused for a window to resume)
            elsewhere = alive and state not in (RunState.COMPLETE.value, RunState.CANCELLED.value)
            out.append({
                "driver": f"pid {r[10]} on {r[9]}" if elsewhere else None,  # a live process that is not this one
                "run_id": r[0], "objective": r[1], "strategy": r[2], "state": state, "stop_reason": reason,
                "started_at": r[5], "updated_at": r[6], "tokens": r[7], "goals": r[8],
                "outcome": r[12], "model": r[13], "last_seq": r[14], "health": _figures(r[15]),
            })
        return out

    def events(self, run_id: str, *, after: int = 0, upto: int | None = None) -> Iterator[ev.Event]:
        """The run's events in order (a range of them with `after`/`upto`)."""
        return self._select_events("run_id=?", [run_id], upto, after=after)

    def _select_events(self, where: str, args: list, upto: int | None, after: int = 0) -> Iterator[ev.Event]:
        """Events in order, read a page at a time (keyed on seq): a replay of millions of events holds
        one page of rows, not all of them, and the lock only while a page is read."""
        sql = "SELECT seq, ts, type, data FROM events WHERE " + where + " AND seq>?"
        if upto is not None:
            sql += " AND seq<=?"
        sql += f" ORDER BY seq LIMIT {READ_PAGE}"  # one lower bound on seq, so each page starts at its key
        while True:
            with self._lock:
                rows = self._db.execute(sql, [*args, after] + ([upto] if upto is not None else [])).fetchall()
            yield from self._decode(rows)
            if len(rows) < READ_PAGE:
                return
            after = rows[-1][0]

    def _decode(self, rows) -> Iterator[ev.Event]:
        for seq, ts, type_name, data in rows:
            payload = json.loads(data)
            if type_name == "model_called":
                payload["messages"] = [self._expand(m) for m in payload["messages"]]
            yield ev.from_payload(type_name, seq, ts, payload)

    def goal_events(self, run_id: str, goal_id: str, *, upto: int | None = None) -> list[ev.Event]:
        """One goal's own events (added, changed, turns, model and tool calls), in order."""
        return list(self._select_events("run_id=? AND goal_id=?", [run_id, goal_id], upto))

    def series(self, run_id: str, *, upto: int | None = None) -> list[tuple[int, dict]]:
        """The run's totals after each committed batch (see `write`), oldest first."""
        sql, args = "SELECT seq, data FROM series WHERE run_id=?", [run_id]
        if upto is not None:
            sql += " AND seq<=?"
            args.append(upto)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY seq", args).fetchall()
        return [(seq, json.loads(data)) for seq, data in rows]

    def children(self, run_id: str, parent_id: str | None, offset: int = 0, limit: int = -1,
                 upto: int | None = None) -> list[tuple]:
        """A page of one goal's children from the projection (None: the top goals), in creation order:
        (goal_id, depth, text, status, tokens, attempts, result_chars, children, reused). With `upto`,
        as they were at that event: only goals added by then, each figure from its own events up to
        it (the goal index makes that a few rows per goal, so a page costs the same at any moment of
        any run; no replay)."""
        if upto is not None:
            return self._children_at(run_id, parent_id, offset, limit, upto)
        columns = f"goal_id, depth, text, status, tokens, attempts, result_chars, children, instr(note, '{REUSED}') > 0"
        with self._lock:
            if parent_id is None:
                cur = self._db.execute(f"SELECT {columns} FROM goals WHERE run_id=? AND parent_id IS NULL"
                                       " ORDER BY ord LIMIT ? OFFSET ?", (run_id, limit, offset))
            else:
                cur = self._db.execute(f"SELECT {columns} FROM goals WHERE run_id=? AND parent_id=?"
                                       " ORDER BY ord LIMIT ? OFFSET ?", (run_id, parent_id, limit, offset))
            return cur.fetchall()

    def _children_at(self, run_id: str, parent_id: str | None, offset: int, limit: int, n: int) -> list[tuple]:
        mine = "e.run_id=g.run_id AND e.goal_id=g.goal_id AND e.seq<=:n"
        sql = f"""SELECT g.goal_id, g.depth, g.text,
            coalesce((SELECT CASE e.type WHEN 'turn_started' THEN 'running' ELSE json_extract(e.data, '$.status') END
                      FROM events e INDEXED BY events_by_goal WHERE {mine} AND (e.type='turn_started' OR (e.type='goal_changed'
                      AND json_extract(e.data, '$.status') IS NOT NULL)) ORDER BY e.seq DESC LIMIT 1), 'pending'),
            coalesce((SELECT sum(json_extract(e.data, '$.tokens_in') + json_extract(e.data, '$.tokens_out'))
                      FROM events e INDEXED BY events_by_goal WHERE {mine} AND e.type='model_called'), 0),
            coalesce((SELECT json_extract(e.data, '$.attempts') FROM events e INDEXED BY events_by_goal WHERE {mine} AND e.type='goal_changed'
                      AND json_extract(e.data, '$.attempts') IS NOT NULL ORDER BY e.seq DESC LIMIT 1), 0),
            coalesce((SELECT length(json_extract(e.data, '$.result')) FROM events e INDEXED BY events_by_goal WHERE {mine}
                      AND e.type='goal_changed' AND json_type(e.data, '$.result')='text' ORDER BY e.seq DESC LIMIT 1), 0),
            (SELECT count(*) FROM goals c WHERE c.run_id=g.run_id AND c.parent_id=g.goal_id AND c.ord<=:n),
            0
            FROM goals g WHERE g.run_id=:run AND g.ord<=:n AND g.parent_id {'IS NULL' if parent_id is None else '=:parent'}
            ORDER BY g.ord LIMIT :limit OFFSET :offset"""
        with self._lock:
            return self._db.execute(sql, {"run": run_id, "parent": parent_id, "n": n, "limit": limit,
                                          "offset": offset}).fetchall()

    def find_goals(self, run_id: str, text: str = "", status: str = "", limit: int = 1000) -> list[str]:
        """Ids of goals whose id or text contains `text` (any case) and whose status is `status`
        (either may be empty), in creation order, at most `limit`."""
        sql, args = "SELECT goal_id FROM goals WHERE run_id=?", [run_id]
        if text:
            sql += " AND (instr(lower(text), ?) > 0 OR instr(lower(goal_id), ?) > 0)"
            args += [text.lower(), text.lower()]
        if status:
            sql += " AND status=?"
            args.append(status)
        with self._lock:
            return [r[0] for r in self._db.execute(sql + " ORDER BY ord LIMIT ?", (*args, limit))]

    def goal_path(self, run_id: str, goal_id: str) -> list[str]:
        """The ids from the top goal down to `goal_id` (to open the tree at a goal)."""
        path = []
        current: str | None = goal_id
        with self._lock:
            while current is not None:
                row = self._db.execute("SELECT parent_id FROM goals WHERE run_id=? AND goal_id=?",
                                       (run_id, current)).fetchone()
                if row is None:
                    break
                path.append(current)
                current = row[0]
        return path[::-1]

    def health(self, run_id: str) -> dict:
        """The run's health numbers from the projection, without replaying it (see report.health)."""
        with self._lock:
            leaves = dict(self._db.execute(
                "SELECT status, count(*) FROM goals WHERE run_id=? AND children=0 GROUP BY status", (run_id,)))
            depth, fell, limit_hit, retries = self._db.execute(
                "SELECT coalesce(max(depth), 0), coalesce(sum(note LIKE '%executed directly%'), 0),"
                " coalesce(max(note LIKE '%depth limit%'), 0), coalesce(sum(attempts > 1), 0)"
                " FROM goals WHERE run_id=?", (run_id,)).fetchone()
        return {"leaves_done": leaves.get("done", 0), "leaves_failed": leaves.get("failed", 0),
                "max_depth_reached": depth, "depth_limit_hit": bool(limit_hit), "fell_through": fell,
                "retries": retries}

    def summary(self, run_id: str) -> dict:
        """The run's row as `runs()` lists it, with its latest totals (`RunRecord.snapshot()` fields)."""
        found = self.runs(run_id)
        if not found:
            raise JournalError(f"no run {run_id}")
        listed = found[0]
        with self._lock:
            row = self._db.execute("SELECT data FROM series WHERE run_id=? ORDER BY seq DESC LIMIT 1",
                                   (run_id,)).fetchone()
            started = self._db.execute("SELECT data FROM events WHERE run_id=? AND seq=1", (run_id,)).fetchone()
        listed["totals"] = json.loads(row[0]) if row else {}
        listed["run_started"] = json.loads(started[0]) if started else {}
        return listed

    def tree(self, run_id: str) -> dict:
        """The run's goals as the projection holds them, with each goal's result, first and last event
        time and model calls, and the run's totals: a tree to compare without replaying the run
        (`compare`). Token counts are whole (the projection does not split them in and out)."""
        with self._lock:
            rows = self._db.execute("SELECT goal_id, parent_id, depth, text, status, tokens, attempts FROM goals"
                                    " WHERE run_id=? ORDER BY ord", (run_id,)).fetchall()
            results = self._db.execute(
                "SELECT goal_id, json_extract(data, '$.result') FROM events WHERE run_id=? AND type='goal_changed'"
                " AND json_type(data, '$.result')='text' ORDER BY seq", (run_id,)).fetchall()
            spans = self._db.execute(
                "SELECT goal_id, min(ts), max(ts), sum(type='model_called') FROM events WHERE run_id=?"
                " AND goal_id IS NOT NULL GROUP BY goal_id", (run_id,)).fetchall()
        found = self.summary(run_id)  # raises for an unknown run
        result = dict(results)  # the last result of each goal wins
        span = {g: (first, last, calls) for g, first, last, calls in spans}
        goals: dict[str, Goal] = {}
        root = None
        for goal_id, parent_id, depth, text, status, tokens, attempts in rows:
            first, last, _calls = span.get(goal_id, (0.0, 0.0, 0))
            goals[goal_id] = Goal(goal_id, parent_id, depth, text, status=GoalStatus(status), attempts=attempts,
                                  result=result.get(goal_id, ""), tokens_in=tokens, created_at=first, updated_at=last)
            if parent_id is None:
                root = root or goal_id
            elif parent_id in goals:
                goals[parent_id].children.append(goal_id)
        totals = found["totals"]
        return {"run_id": run_id, "state": found["state"], "root_id": root, "goals": goals,
                "calls_by_goal": {g: c for g, (_f, _l, c) in span.items()}, "tokens": found["tokens"],
                "calls": int(totals.get("calls", 0)), "seconds": float(totals.get("active", 0.0))}

    def final_health(self, run_id: str) -> dict:
        """The strategy's health figures journaled when the run last stopped (`engine.health`), or {}."""
        with self._lock:
            row = self._db.execute("SELECT health FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return _figures(row[0]) if row else {}

    def final_summary(self, run_id: str) -> str:
        """The run's latest wrap-up (its Summarized event's text), or ""."""
        with self._lock:
            row = self._db.execute("SELECT data FROM events WHERE run_id=? AND type='summarized' "
                                   "ORDER BY seq DESC LIMIT 1", (run_id,)).fetchone()
        return str(json.loads(row[0]).get("text", "")) if row else ""

    def event_at(self, run_id: str, seq: int) -> tuple[str, str | None] | None:
        """(kind, goal id) of the run's event `seq`, for the timeline's label; None past the end."""
        with self._lock:
            row = self._db.execute("SELECT type, goal_id FROM events WHERE run_id=? AND seq=?",
                                   (run_id, seq)).fetchone()
        return (row[0], row[1]) if row else None

    def _expand(self, message: dict) -> dict:
        return guard.expand(message, self._text)

    def _text(self, digest: str) -> str:
        text = self._texts_by_hash.get(digest)
        if text is None:
            with self._lock:
                row = self._db.execute("SELECT text FROM texts WHERE hash=?", (digest,)).fetchone()
            text = row[0] if row else ""
            self._texts_by_hash[digest] = text
        return text

    def load(self, run_id: str, *, upto: int | None = None) -> RunRecord:
        """Rebuild a run's record by replaying its events (up to event `upto`)."""
        record = RunRecord.from_events(self.events(run_id, upto=upto))
        if not record.run_id:
            raise JournalError(f"no run {run_id}")
        return record

    def view(self, run_id: str) -> RunRecord:
        """The run as a person should see it: one whose driving process is gone shows paused
        (the restore is only recorded by whoever resumes it)."""
        record = self.load(run_id)
        if record.state is RunState.ACTIVE and not self.owner_alive(run_id) and run_id not in self._owned:
            seq, ts = record.last_seq, record.updated_at
            for event_type, fields in interruption(record):
                seq += 1
                record.apply(event_type(seq=seq, ts=ts, **fields))
        return record


def _figures(text: str | None) -> dict:
    """A run's stored health figures, or {} (none journaled yet, or not an object)."""
    try:
        figures = json.loads(text) if text else None
    except ValueError:
        return {}
    return figures if isinstance(figures, dict) else {}
