"""The journal's tables (schema 4). `Journal` creates them, and upgrades an older journal once."""

SCHEMA_VERSION = 4

TABLES = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    objective   TEXT NOT NULL,
    strategy    TEXT NOT NULL,
    model       TEXT NOT NULL,
    state       TEXT NOT NULL,
    stop_reason TEXT,
    outcome     TEXT,
    started_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    tokens      INTEGER NOT NULL DEFAULT 0,
    goals       INTEGER NOT NULL DEFAULT 0,
    last_seq    INTEGER NOT NULL DEFAULT 0,
    owner_host  TEXT,
    owner_pid   INTEGER,
    lease_until REAL,
    health      TEXT  -- the strategy's health figures (JSON) journaled at the run's last stop
);
-- a rowid table: events are appended in rowid order and many are large (model calls)
CREATE TABLE IF NOT EXISTS events (
    id     INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    ts     REAL NOT NULL,
    type   TEXT NOT NULL,
    data   TEXT NOT NULL,
    goal_id TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS events_by_run ON events (run_id, seq);
CREATE TABLE IF NOT EXISTS goals (
    run_id    TEXT NOT NULL,
    goal_id   TEXT NOT NULL,
    ord       INTEGER NOT NULL,
    parent_id TEXT,
    depth     INTEGER NOT NULL,
    text      TEXT NOT NULL,
    status    TEXT NOT NULL,
    tokens    INTEGER NOT NULL DEFAULT 0,
    attempts  INTEGER NOT NULL DEFAULT 0,
    result_chars INTEGER NOT NULL DEFAULT 0,
    note      TEXT NOT NULL DEFAULT '',
    children  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, goal_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS goals_by_parent ON goals (run_id, parent_id, ord);
-- the run's totals after each committed batch, and what happened in it worth marking on a plot
CREATE TABLE IF NOT EXISTS series (
    run_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    data   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS texts (
    hash TEXT PRIMARY KEY,
    text TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS controls (
    id         INTEGER PRIMARY KEY,
    run_id     TEXT NOT NULL,
    action     TEXT NOT NULL,
    args       TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    taken_at   REAL
);
-- windows attached to a run another process drives: the driver waits for their answer to a
-- confirmation (and holds a stopped run for them to resume) while one has been seen lately
CREATE TABLE IF NOT EXISTS watchers (
    run_id  TEXT NOT NULL,
    watcher TEXT NOT NULL,
    host    TEXT NOT NULL,
    pid     INTEGER NOT NULL,
    seen_at REAL NOT NULL,
    PRIMARY KEY (run_id, watcher)
) WITHOUT ROWID;
"""

INDEXES = """
CREATE INDEX IF NOT EXISTS events_by_goal ON events (run_id, goal_id) WHERE goal_id IS NOT NULL;
"""
# the event types that concern one goal (their payload has a goal_id)
GOAL_EVENTS = ("goal_added", "goal_changed", "turn_started", "model_called", "tool_called", "confirmation_asked",
               "goal_overruled")
