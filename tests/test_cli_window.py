"""`goalgui run --window`: the run in the window (offscreen, and on a real X server under Xvfb),
and the terminal when there is no display to open it on."""

import json
import subprocess

from .conftest import cli_env, goalgui_cmd

OBJECTIVE = "Produce a market analysis of UK meal-kit services"


def run_cli(env, *args, timeout=120):
    return subprocess.run(goalgui_cmd(*args), env=env, capture_output=True, text=True, timeout=timeout)


def journaled(env):
    out = run_cli(env, "runs", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_run_happens_in_the_window_and_ends_with_it(isolated_home):
    env = cli_env(isolated_home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    out = run_cli(env, "run", OBJECTIVE, "--model", "scripted:rehearsal", "--window", "--exit-when-done")
    assert out.returncode == 0, out.stderr
    assert "no display" not in out.stderr and "g1" not in out.stdout  # nothing followed in the terminal
    runs = journaled(env)
    assert [(r["objective"], r["state"], r["goals"]) for r in runs] == [(OBJECTIVE, "complete", 9)]


def test_a_bad_model_is_one_line_and_exit_2(isolated_home):
    env = cli_env(isolated_home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    out = run_cli(env, "run", OBJECTIVE, "--model", "nosuch:thing", "--window", "--exit-when-done")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "nosuch" in out.stderr
    assert journaled(env) == []


def test_with_no_display_the_run_is_followed_in_the_terminal(isolated_home):
    env = cli_env(isolated_home)
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    out = run_cli(env, "run", OBJECTIVE, "--model", "scripted:rehearsal", "--window")
    assert out.returncode == 0, out.stderr
    assert "no display to open the window on" in out.stderr and "g1" in out.stdout
    assert journaled(env)[0]["state"] == "complete"


def test_the_window_runs_on_a_real_x_server(isolated_home):
    """Under Xvfb with Qt's xcb platform, as on a desktop (CI installs xvfb; no skip without it)."""
    env = cli_env(isolated_home)
    env.pop("QT_QPA_PLATFORM", None)
    env.pop("WAYLAND_DISPLAY", None)
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", *goalgui_cmd(
        "run", OBJECTIVE, "--model", "scripted:rehearsal", "--window", "--exit-when-done")]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert journaled(env)[0]["state"] == "complete"
    log = next((isolated_home).rglob("goalgui.log")).read_text()
    assert "window on Qt's xcb platform" in log
