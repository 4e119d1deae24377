"""Screenshots of the window on a real X server: a live run with a confirmation dialog open, and a
finished run under inspection. Run through scripts/screenshots.sh (which starts Xvfb).

    python scripts/screenshots.py OUT_DIR
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


async def wait_for(predicate, timeout=30.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("the window did not get there in time")
        await asyncio.sleep(0.05)


def grab(app, window, path: Path) -> None:
    """The window's area of the screen (dialogs over it included)."""
    g = window.frameGeometry()
    app.primaryScreen().grabWindow(0, g.x(), g.y(), g.width(), g.height()).save(str(path))
    print(f"saved {path}")


SIZES = {"": (1600, 1000), "small-": (900, 600)}


async def scenario(app, window, out: Path) -> None:
    from goalgui.engine import Limits, RunState
    from goalgui.ui.theme import apply_theme

    for prefix, (width, height) in SIZES.items():
        apply_theme("light")
        window.setGeometry(0, 0, width, height)
        window.tabs.setCurrentIndex(0)
        window.budgets.views.setCurrentWidget(window.budgets.plot)
        run = window.start_goal({"objective": "Produce a market analysis of UK meal-kit services with a pricing "
                                              "recommendation", "criteria": "Every price has a source",
                                 "strategy": "goal-stack", "model": "scripted:rehearsal",
                                 "limits": Limits(tokens=40_000, turns=12), "mode": "ask"})
        await wait_for(lambda: window.confirmer.open_dialogs)
        dialog = window.confirmer.open_dialogs[0]
        dialog.move(width - dialog.width() - 20, 60)
        await asyncio.sleep(0.6)
        grab(app, window, out / f"{prefix}live-confirmation.png")
        dialog.approve_button.click()
        run.set_permission_mode("auto")
        await wait_for(lambda: run.state is not RunState.ACTIVE, 60)
        if run.state is RunState.BLOCKED:  # the token budget: raise it and let it finish
            await asyncio.sleep(0.8)
            grab(app, window, out / f"{prefix}blocked-by-budget.png")
            run.set_limits(tokens=400_000)
            run.resume()
            run.start()
            await wait_for(lambda: run.state.final, 60)
        await asyncio.sleep(0.5)
        shown = []
        window.moment_shown.connect(shown.append)
        window.refresh_runs()
        window.show_journaled(run.run_id)  # as the Runs view opens it: read from the journal
        await wait_for(lambda: shown)
        window.moment_shown.disconnect()
        window.tree.expandAll()
        model = window.tree.model()
        window.tree.setCurrentIndex(model.index(2, 0, model.index(0, 0)))
        await asyncio.sleep(0.6)
        grab(app, window, out / f"{prefix}finished-run.png")
        apply_theme("dark")
        await asyncio.sleep(0.6)
        grab(app, window, out / f"{prefix}finished-run-dark.png")
        window.budgets.views.setCurrentWidget(window.budgets.purpose_plot)
        await asyncio.sleep(0.4)
        grab(app, window, out / f"{prefix}tokens-by-purpose-dark.png")
        window.tabs.setCurrentWidget(window.runs_view)
        await asyncio.sleep(0.4)
        grab(app, window, out / f"{prefix}runs-dark.png")


async def strategies(app, window, out: Path) -> None:
    """The task loop's queue and the plan's graph, on the embedded model (as `--window` shows them)."""
    from goalgui.engine import Limits, RunState
    from goalgui.ui.theme import apply_theme

    apply_theme("light")
    window.setGeometry(0, 0, *SIZES[""])
    window.tabs.setCurrentIndex(0)
    window.budgets.views.setCurrentWidget(window.budgets.plot)
    limits = Limits(tokens=300_000, max_goals=40, max_depth=2)
    runs = []
    for strategy, options in (("plan", {}), ("task-loop", {"max_iterations": 5})):
        run = window.start_goal({"objective": "Plan a small birthday party for a child", "criteria": "",
                                 "strategy": strategy, "model": "local", "limits": limits, "mode": "auto",
                                 "options": options})
        if strategy == "plan":  # steps running: the boxes pulse
            await wait_for(lambda: any(g.status.value == "running" for g in run.record.tasks()), 300)
            await asyncio.sleep(1.0)
            grab(app, window, out / "plan-running.png")
        else:  # the queue with tasks waiting
            await wait_for(lambda: len(run.record.tasks()) >= 3 or run.state.final, 300)
            await asyncio.sleep(0.5)
            grab(app, window, out / "task-loop-running.png")
        await wait_for(lambda: run.state.final or run.state is not RunState.ACTIVE, 900)
        await asyncio.sleep(1.0)
        grab(app, window, out / f"{strategy}-finished.png")
        runs.append(run)
    window.tabs.setCurrentWidget(window.runs_view)
    await asyncio.sleep(0.6)
    grab(app, window, out / "runs-health.png")
    # the plan against the task loop on one objective, in the compare view
    await window.compare_runs(runs[0].run_id, runs[1].run_id)
    await asyncio.sleep(0.6)
    grab(app, window, out / "compare.png")
    await attached(app, window, out)


async def attached(app, window, out: Path) -> None:
    """A window attached to a run that `goalgui run` drives in another process (the rehearsal, slowed,
    in ask mode with no terminal): the driver's question asked in the window, then the run followed."""
    import json
    import subprocess
    import tempfile

    from goalgui.providers.scripted import ScriptedModel

    script = Path(tempfile.mkdtemp()) / "slow-rehearsal.json"
    script.write_text(json.dumps({**ScriptedModel.from_spec("rehearsal").script, "latency": 1.0}))
    driver = subprocess.Popen([sys.executable, "-m", "goalgui", "run", "Produce a market analysis of UK meal-kit "
                               "services with a pricing recommendation", "--model", f"scripted:{script}",
                               "--permission-mode", "ask"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    run_id = driver.stdout.readline().split()[1].rstrip(":")
    await wait_for(lambda: window.journal.runs(run_id) and window.journal.runs(run_id)[0]["state"] == "active")
    window.tabs.setCurrentIndex(0)
    window.budgets.views.setCurrentWidget(window.budgets.plot)
    window.show_journaled(run_id)
    await wait_for(lambda: window.confirmer.open_dialogs, 60)
    dialog = window.confirmer.open_dialogs[0]
    g = window.frameGeometry()
    dialog.move(g.x() + g.width() - dialog.width() - 20, g.y() + 60)
    await asyncio.sleep(0.8)
    grab(app, window, out / "attached-confirmation.png")
    dialog.mode.setCurrentText("auto")  # approved here, and the rest runs without asking
    dialog.approve_button.click()
    await wait_for(lambda: len(window.run.record.goals) >= 6, 60)
    window.tree.expandAll()
    await asyncio.sleep(1.5)
    grab(app, window, out / "attached.png")
    driver.wait(timeout=180)
    driver.stdout.close()


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("GOALGUI_HOME", tempfile.mkdtemp(prefix="goalgui-shots-"))
    import qasync
    from PySide6.QtWidgets import QApplication

    from goalgui import paths
    from goalgui.journal import Journal
    from goalgui.settings import Settings
    from goalgui.ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    journal = Journal(paths.journal_path())
    window = MainWindow(journal, Settings())
    window.show()
    with loop:
        loop.run_until_complete(scenario(app, window, out))
        loop.run_until_complete(strategies(app, window, out))
    journal.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
