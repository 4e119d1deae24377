"""The SQLite journal: durable batches, projections, restore, listing, ownership."""

import sqlite3

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.engine.health import health
from goalgui.engine.lifecycle import InputError
from goalgui.journal import Journal, JournalError, RunBusy

from .models import FunctionModel, well_behaved


async def finished_run(journal, width=2):
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=width)), sink=journal)
    await run.drive()
    return run


def test_schema_is_versioned_and_in_wal_mode(tmp_path):
    path = tmp_path / "j.sqlite3"
    Journal(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="newer goalgui"):
        Journal(path)


async def test_a_schema_1_journal_is_migrated_with_its_runs_intact(tmp_path):
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=3)), sink=journal,
                     limits=Limits(tokens=5_000))
    await run.drive()
    expected = (journal.children(run.run_id, "g1"), journal.health(run.run_id),
                [type(e).__name__ for e in journal.goal_events(run.run_id, "g2")])
    last_totals = journal.series(run.run_id)[-1][1]
    journal.close()
    db = sqlite3.connect(path)  # take it back to what goalgui 0.1 wrote
    db.executescript("DROP INDEX events_by_goal; ALTER TABLE events DROP COLUMN goal_id;"
                     "ALTER TABLE goals DROP COLUMN note; ALTER TABLE goals DROP COLUMN children;"
                     "DROP TABLE series; DROP TABLE watchers; ALTER TABLE runs DROP COLUMN health; PRAGMA user_version=1;")
    db.close()
    journal = Journal(path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4
    assert journal.final_health(run.run_id) == health(run.record) != {}
    got = (journal.children(run.run_id, "g1"), journal.health(run.run_id),
           [type(e).__name__ for e in journal.goal_events(run.run_id, "g2")])
    assert got == expected
    migrated = journal.series(run.run_id)[-1][1]
    assert {k: migrated[k] for k in ("tokens", "turns", "goals", "settled", "purpose", "state")} == \
        {k: last_totals[k] for k in ("tokens", "turns", "goals", "settled", "purpose", "state")}
    assert journal.load(run.run_id).report() == run.record.report()
    journal.close()


async def test_a_schema_2_journal_learns_each_runs_health_from_its_events(tmp_path):
    """Schema 3 keeps the health figures of a run's last stop beside its state; a journal written
    before that takes them from each run's last state change that had them, once."""
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    runs = []
    for objective in ("Write a report", "Write a second report"):
        run = Run.create(objective, FunctionModel(lambda r: well_behaved(r, width=2)), sink=journal,
                         limits=Limits(tokens=5_000))
        await run.drive()
        runs.append(run)
    expected = {r.run_id: journal.final_health(r.run_id) for r in runs}
    assert all(expected.values()) and expected[runs[0].run_id]["strategy"] == "goal-stack"
    journal.close()
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE runs DROP COLUMN health; DROP TABLE watchers; PRAGMA user_version=2;")
    db.close()
    journal = Journal(path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4
    assert {r.run_id: journal.final_health(r.run_id) for r in runs} == expected
    assert {r["run_id"]: r["health"] for r in journal.runs()} == expected
    journal.close()


async def test_a_schema_3_journal_gains_the_watchers_table_and_is_readable_before_that(tmp_path, monkeypatch):
    """Schema 4 only adds the table attached windows write to: a reader takes a schema 3 journal as
    it is (nobody watches), a writer adds the table once."""
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    run = await finished_run(journal)
    journal.close()
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE watchers; PRAGMA user_version=3;")
    db.close()
    with monkeypatch.context() as m:  # a reader: the folder cannot be written
        m.setattr("goalgui.journal.guard.unwritable_reason", lambda _path: "its folder is read-only")
        reader = Journal(path)
        assert reader.read_only
        assert reader.watchers(run.run_id) == 0 and reader.load(run.run_id).report() == run.record.report()
        reader.close()
    journal = Journal(path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4
    journal.watch(run.run_id, "w1")
    assert journal.watchers(run.run_id) == 1
    journal.unwatch(run.run_id, "w1")
    assert journal.watchers(run.run_id) == 0
    journal.close()


async def test_the_series_and_goal_reads_match_the_run(journal):
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=3)), sink=journal,
                     limits=Limits(tokens=220))
    await run.drive()
    series = journal.series(run.run_id)
    assert [seq for seq, _ in series] == sorted(seq for seq, _ in series)
    last = series[-1][1]
    assert last["tokens"] == run.record.metrics.tokens and last["goals"] == run.record.metrics.goals_created
    assert last["purpose"] == run.record.metrics.tokens_by_purpose and last["state"] == run.state.value
    assert last["settled"] == sum(1 for g in run.record.goals.values() if g.status.value in
                                  ("done", "failed", "skipped", "abandoned"))
    marks = [m for _, d in series for m in d["marks"]]
    assert ("nudge", "tokens") in [(kind, detail) for kind, _ts, detail in marks]
    for goal in run.record.goals.values():
        own = journal.goal_events(run.run_id, goal.id)
        assert own and all(getattr(e, "goal_id", None) == goal.id for e in own)
        assert sum(e.tokens_in + e.tokens_out for e in own if e.type == "model_called") == goal.tokens
    top = journal.children(run.run_id, None)
    assert [r[0] for r in top] == ["g1"] and top[0][7] == len(run.record.goals["g1"].children)
    assert journal.children(run.run_id, "g1", offset=1, limit=1)[0][0] == run.record.goals["g1"].children[1]
    from goalgui.report import health
    assert journal.health(run.run_id) == health(run.record)
    assert journal.goal_path(run.run_id, run.record.goals["g1"].children[0]) == \
        ["g1", run.record.goals["g1"].children[0]]


async def test_events_are_committed_before_subscribers_see_them(journal):
    seen = []

    def subscriber(batch):
        stored = {e.seq for e in journal.events(batch[0] and run.run_id)}
        seen.append(all(e.seq in stored for e in batch))

    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    run.subscribe(subscriber)
    await run.drive()
    assert seen and all(seen)


async def test_projections_match_the_replayed_run(journal):
    run = await finished_run(journal, width=3)
    rows = journal.children(run.run_id, None)
    assert [r[0] for r in rows] == ["g1"]
    children = journal.children(run.run_id, "g1")
    assert [r[0] for r in children] == ["g2", "g3", "g4"]
    for goal_id, depth, text, status, tokens, attempts, result_chars, child_count, reused in rows + children:
        goal = run.record.goals[goal_id]
        assert (depth, text, status, tokens, attempts, result_chars, child_count, bool(reused)) == (
            goal.depth, goal.text, goal.status.value, goal.tokens, goal.attempts, len(goal.result),
            len(goal.children), "reused finding of" in goal.note)
    listed = journal.runs()[0]
    assert listed["state"] == "complete" and listed["goals"] == 4
    assert listed["tokens"] == run.record.metrics.tokens


async def test_listing_and_prefixes(journal):
    for run_id in ("abc111", "abc222"):
        run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal, run_id=run_id)
        await run.drive()
    assert [r["run_id"] for r in journal.runs()] == ["abc222", "abc111"]  # newest first
    assert journal.resolve("abc1") == "abc111"
    assert journal.resolve("abc222") == "abc222"
    with pytest.raises(InputError, match="no run matches"):
        journal.resolve("zzzz")
    with pytest.raises(InputError, match="several runs"):
        journal.resolve("abc")


async def test_an_orphaned_active_run_is_listed_paused_and_restored_paused(tmp_path):
    path = tmp_path / "j.sqlite3"
    first = Journal(path)
    model = FunctionModel(lambda r: well_behaved(r), delay=10)
    run = Run.create("Write a report", model, sink=first)
    run.recorder.flush()
    # the process "dies": its lease is someone else's now, and that pid is gone
    first._db.execute("UPDATE runs SET owner_pid=999999999 WHERE run_id=?", (run.run_id,))
    first._owned.clear()
    second = Journal(path)
    listed = second.runs()[0]
    assert listed["state"] == "paused" and listed["stop_reason"].startswith("interrupted")
    record = second.load(run.run_id)
    assert record.state is RunState.ACTIVE
    second.claim(run.run_id)
    restored = Run.restore(record, FunctionModel(lambda r: well_behaved(r)), sink=second)
    assert restored.state is RunState.PAUSED
    restored.resume()
    assert await restored.drive() is RunState.COMPLETE
    assert second.runs()[0]["state"] == "complete"
    first.close()
    second.close()


async def test_a_live_owner_keeps_the_run(tmp_path):
    path = tmp_path / "j.sqlite3"
    first, second = Journal(path), Journal(path)
    run = Run.create("Write a report", FunctionModel(lambda r: "x"), sink=first)
    run.recorder.flush()
    second._pid = second._pid + 1  # a different process on this host; the first one is alive
    with pytest.raises(RunBusy):
        second.claim(run.run_id)
    first.close()
    second.close()


async def test_a_failed_write_stops_publication(journal):
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    seen = []
    run.subscribe(seen.append)
    journal._db.execute("DROP TABLE goals")
    with pytest.raises(JournalError, match="cannot be written: SQLITE_ERROR: no such table: goals"):
        await run.drive()
    assert not seen


async def test_replayed_model_calls_carry_the_messages_sent(journal):
    model = FunctionModel(lambda r: well_behaved(r, width=2))
    run = Run.create("Write a report", model, sink=journal)
    await run.drive()
    calls = [e for e in journal.events(run.run_id) if e.type == "model_called"]
    assert [c.messages for c in calls] == [r.messages for r in model.calls]
    # each fixed instruction text is stored once, however many calls used it
    stored = journal._db.execute("SELECT count(*) FROM texts").fetchone()[0]
    assert stored == len({r.messages[0]["content"] for r in model.calls})
    fresh = Journal(journal.path)
    assert [e.messages for e in fresh.events(run.run_id) if e.type == "model_called"] == [c.messages for c in calls]
    fresh.close()


async def test_time_travel_rebuilds_the_run_as_it_was_at_any_event(journal):
    run = await finished_run(journal, width=3)
    events = list(journal.events(run.run_id))
    added = [e.seq for e in events if e.type == "goal_added"]
    early = journal.load(run.run_id, upto=added[1])
    assert list(early.goals) == ["g1", "g2"] and early.state is RunState.ACTIVE
    assert early.goals["g2"].status.value == "pending"
    assert journal.load(run.run_id, upto=events[-1].seq).report() == run.record.report()
    assert [e.seq for e in journal.events(run.run_id, after=3, upto=5)] == [4, 5]


async def test_events_are_read_a_page_at_a_time_in_order(journal, monkeypatch):
    from goalgui.journal import reading

    run = await finished_run(journal, width=3)
    everything = [e.seq for e in journal.events(run.run_id)]
    monkeypatch.setattr(reading, "READ_PAGE", 7)
    assert [e.seq for e in journal.events(run.run_id)] == everything == list(range(1, run.record.last_seq + 1))
    assert [e.seq for e in journal.events(run.run_id, after=5, upto=30)] == list(range(6, 31))
    assert journal.load(run.run_id, upto=21).last_seq == 21
    g1 = [e.seq for e in journal.goal_events(run.run_id, "g1")]
    monkeypatch.setattr(reading, "READ_PAGE", 2)
    assert [e.seq for e in journal.goal_events(run.run_id, "g1")] == g1
