"""The kill -9 loop the crash tests share: runs of a plug-in model are started, killed mid-work by
progress (after some more executions, never at a random delay: on a fast machine a delay mostly met
finished runs), resumed, killed again; then every run is finished and no goal the journal had as
done at a kill was executed again."""

from __future__ import annotations

import json
import random
import subprocess
import time

from .conftest import cli_env, goalgui_cmd


def kill_and_resume(tmp_path, plugin: str, run_args: list[str], *, kills: int, seed: int, more: tuple[int, int],
                    most_runs: int, done_goal=lambda g: g["status"] == "done") -> list[dict]:
    """`run_args` after "run OBJECTIVE"; the plug-in logs each execution to $CRASH_LOG. Returns the
    final reports of every run made, after checking no done work was redone."""
    (tmp_path / "crashy.py").write_text(plugin)
    log = tmp_path / "executions.log"
    env = cli_env(tmp_path / "home")
    env["CRASH_LOG"] = str(log)
    rng = random.Random(seed)

    def cli(*args):
        return subprocess.run(goalgui_cmd(*args), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    def log_lines():
        return log.read_text().splitlines() if log.exists() else []

    checkpoints = []  # (run_id, goals done per the journal after a kill, log length then)
    run_ids, killed, current = [], 0, None
    while killed < kills:
        assert len(run_ids) < most_runs, "the kills never met a run at work"
        args = ("resume", current) if current else ("run", f"Crash objective {len(run_ids)}", *run_args)
        proc = subprocess.Popen(goalgui_cmd(*args), cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        first = proc.stdout.readline()
        if current is None:
            current = first.split()[1].rstrip(":")
            run_ids.append(current)
        target = len(log_lines()) + rng.randint(*more)
        deadline = time.monotonic() + 60
        while proc.poll() is None and len(log_lines()) < target and time.monotonic() < deadline:
            time.sleep(0.002)
        proc.kill()
        proc.wait()
        proc.stdout.close()
        listed = {r["run_id"]: r for r in json.loads(cli("runs", "--json").stdout)}
        state = listed[current]["state"]
        if proc.returncode == -9 and state != "complete":
            killed += 1
            assert state == "paused", listed[current]
            report = json.loads(cli("export", current).stdout)
            assert all(g["status"] != "running" for g in report["goals"])
            checkpoints.append((current, {g["text"] for g in report["goals"] if done_goal(g)}, len(log_lines())))
        else:
            current = None  # it finished before the kill: start another run

    reports = []
    for run_id in run_ids:
        if json.loads(cli("export", run_id).stdout)["state"] != "complete":
            out = cli("resume", run_id, "--json")
            assert out.returncode == 0, out.stderr
        reports.append(json.loads(cli("export", run_id).stdout))
    lines = log_lines()
    # goal texts carry their run's objective, so they are unique across runs
    for run_id, done, offset in checkpoints:
        redo = done & set(lines[offset:])
        assert not redo, (run_id, sorted(redo))
    assert killed == kills
    return reports
