"""The main window's journaled runs: open one read-only, travel to a moment of it, and offer the
runs an interruption left paused (resume or abandon). A mixin of `MainWindow`."""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtWidgets import QMessageBox

from ..engine.lifecycle import InputError
from ..engine.record import INTERRUPTED
from ..engine.run import Run
from ..journal import JournalError
from ..runs import abandon_run, resume_run
from .inspect_bar import health_text
from .strategy_pane import SHOWN


log = logging.getLogger(__name__)
# a moment of a run up to this many events is replayed (exact: the plan, the queue and the health
# figures as they were); past it, it is read from the journal at that event (`Journal.children` with
# `upto`), page by page like the whole run, in the same few milliseconds at any scale (open_bench).
# A moment of a task-loop or plan run is always replayed: their queue and graph are drawn from the
# record, and their caps (1,000 iterations at most, 10 steps in 3 versions) keep such a run far
# below the sizes where replaying costs seconds
REPLAY_LIMIT = 200_000


class JournaledRuns:
    def show_journaled(self, run_id: str) -> None:
        """Open a journaled run read-only (its tree read lazily); a paused or blocked one can be resumed.
        A run this window drives is followed live instead, with its controls."""
        driven = self._driven.get(run_id)
        if driven is not None and not driven.state.final:
            self.follow(driven)
            return
        if self.journal.owner_alive(run_id) and self.journal.runs(run_id)[0]["state"] not in ("complete", "cancelled"):
            self.attach(run_id)  # driven by another live process (paused and held for a window, too)
            return
        self._forget_finished()
        self.bridge.detach()
        self._moment_generation += 1
        self.run = None
        self.record = None
        self.summary = self.journal.summary(run_id)
        self.run_summary = ""  # its wrap-up, read with the extras
        started = self.summary.get("run_started") or {}
        self.controls.bind(None, self.summary["totals"].get("mode") or started.get("permission_mode"))
        self.shown_run_id = run_id
        self.shown_seq = self.summary["last_seq"]
        self.tree_model.open_journaled(self.journal, run_id)
        self.plan.show_rows(self.summary["strategy"], self.journal.children(run_id, "g1", limit=50))
        self.tree.expandToDepth(0)
        self.budgets.reset(self.summary["started_at"])
        self.inspect.show_run(run_id, self.shown_seq, lambda: self.journal.load(run_id))
        self.inspect.show_moment(self.shown_seq, self.summary["updated_at"] - self.summary["started_at"],
                                 "reading the run's health…")
        self.inspect.show()
        self.health_line.hide()  # the inspect bar holds a journaled run's health
        # the plots' series and the health numbers scan the whole run: read off the event loop
        self.extras_task = asyncio.ensure_future(self._show_journaled_extras(run_id, self._moment_generation))
        state = self.shown_state
        resumable = state.resumable and not self.journal.owner_alive(run_id)
        self.interrupted_bar.setVisible(resumable)
        self.interrupted_label.setText(f"Run {run_id} is {state.value}: {self.summary['stop_reason'] or ''}")
        self._pending_resume = run_id
        budget_blocked = state.value == "blocked" and (self.summary["stop_reason"] or "").startswith("budget:")
        self.interrupted_resume.setText("Raise and resume…" if budget_blocked else "Resume")
        self.tabs.setCurrentIndex(0)
        self._show_selected()
        self._update_status()


    async def _show_journaled_extras(self, run_id: str, generation: int) -> None:
        shown = self.summary["strategy"] in SHOWN  # their queue or graph is drawn from the whole record
        series, run_health, wrap_up, record, figures = await asyncio.to_thread(
            lambda: (self.journal.series(run_id), self.journal.health(run_id), self.journal.final_summary(run_id),
                     self.journal.load(run_id) if shown else None, self.journal.final_health(run_id)))
        if generation != self._moment_generation:  # another run or moment is shown by now
            return
        self.strategy_pane.show_record(record)
        self.run_summary = wrap_up
        self._show_selected()
        self.budgets.load_series(series, start=self.summary["started_at"])
        self.inspect.show_moment(self.shown_seq, self.summary["updated_at"] - self.summary["started_at"],
                                 health_text(run_health, self.summary["totals"].get("purpose", {}), figures))
        self.moment_shown.emit(self.shown_seq)


    def _on_inspect_moment_chosen(self, n: int) -> None:
        """Time travel: the tree and plots as they were after event n (replayed off the event loop)."""
        run_id = self.shown_run_id
        if run_id is None or self.run is not None:
            return
        self._moment_generation += 1
        generation = self._moment_generation
        if n >= (self.summary or {}).get("last_seq", n + 1):
            self.show_journaled(run_id)  # the whole run again; moment_shown follows with its extras
            return
        if n > REPLAY_LIMIT and (self.summary or {}).get("strategy") not in SHOWN:
            self.moment_task = asyncio.ensure_future(self._show_moment_read(run_id, n, generation))
            return
        self.statusBar().showMessage(f"replaying to event {n:,}…")
        self.moment_task = asyncio.ensure_future(self._show_moment(run_id, n, generation))


    async def _show_moment_read(self, run_id: str, n: int, generation: int) -> None:
        """A moment of a big run, read from the journal at event n: the tree lazily (goals added by
        then, each as it was), the plots to n, the totals of the batch that ended at or before n."""
        series, at = await asyncio.to_thread(lambda: (self.journal.series(run_id, upto=n),
                                                      self.journal.event_at(run_id, n)))
        if generation != self._moment_generation:
            return
        self.record = None
        self.shown_seq = n
        self.tree_model.open_journaled(self.journal, run_id, upto=n)
        self.tree.expandToDepth(0)
        started = self.summary["started_at"]
        self.budgets.load_series(series, start=started)
        totals = series[-1][1] if series else {}
        self.inspect.show_moment(n, (totals.get("ts") or started) - started,
                                 f"at event {n:,}: {totals.get('goals', 0):,} goals, {totals.get('tokens', 0):,} tokens, "
                                 f"{totals.get('done', 0):,} done, {totals.get('failed', 0):,} failed", at)
        self.statusBar().clearMessage()
        self._show_selected()
        self._update_status()
        self.moment_shown.emit(n)

    def refresh_runs(self) -> None:
        self.runs_view.show_runs(self.journal.runs())

    def _on_runs_timer_timeout(self) -> None:
        """The Runs tab follows the journal (runs this window drives, and others' too) while it is shown:
        read off the event loop, at most one read in flight."""
        if self.tabs.currentWidget() is not self.runs_view or getattr(self, "_runs_reading", False):
            return
        self._runs_reading = True

        async def read() -> None:
            try:
                runs = await asyncio.to_thread(self.journal.runs)
                self.runs_view.show_runs(runs)
            except Exception as exc:  # a damaged, locked or closed journal: one line, and the next tick tries again
                log.info("reading the runs failed", exc_info=True)
                self.statusBar().showMessage(f"could not read the runs: {exc}", 8000)
            finally:
                self._runs_reading = False

        self.runs_task = asyncio.ensure_future(read())


    def _offer_interrupted(self) -> None:
        interrupted = [r for r in self.journal.runs() if r["state"] == "paused" and r["stop_reason"] == INTERRUPTED]
        if interrupted:
            latest = interrupted[0]
            self._pending_resume = latest["run_id"]
            self.interrupted_label.setText(
                f"{len(interrupted)} run(s) were active when goalgui last stopped and are paused now. "
                f"Latest: {latest['objective'][:70]}")
            self.interrupted_bar.show()


    def resume_journaled(self, run_id: str, limits: dict | None = None) -> Run | None:
        """Resume a journaled run here (with `limits`: `Run.set_limits` arguments, `clear` included): it
        becomes the window's current goal, replacing another if the operator agrees. Returns the run,
        or None when it was refused or waits for that answer."""
        current = self.current
        if current is not None and current.run_id == run_id:
            return None

        def make() -> Run:
            return resume_run(self.journal, run_id, confirmer=self.engine_confirmer, limits=limits)

        def go(run: Run) -> None:
            self.interrupted_bar.hide()
            self._make_current(run)
            self.follow(run)
            run.start()

        return self.claim("Resuming this run", make, go)

    def _on_interrupted_resume_clicked(self) -> None:
        """Resume; a run a budget blocked first gets the Raise dialog (on its journaled record)."""
        run_id = self._pending_resume
        if self.interrupted_resume.text().startswith("Raise"):
            self.raise_task = asyncio.ensure_future(self._raise_and_resume(run_id))
            return
        self.resume_journaled(run_id)

    async def _raise_and_resume(self, run_id: str):
        from PySide6.QtWidgets import QDialog

        from .controls import RaiseBudgetDialog

        try:
            record = await asyncio.to_thread(self.journal.load, run_id)  # a big run replays off the loop
        except JournalError as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return None
        dialog = RaiseBudgetDialog(record, self)
        dialog.finished.connect(lambda result: self.resume_journaled(run_id, dialog.changes())
                                if result == QDialog.DialogCode.Accepted else None)
        self.raise_dialog = dialog
        dialog.open()
        return dialog


    def _on_interrupted_abandon_clicked(self) -> None:
        """Abandon is final, so it asks once, as Cancel does."""
        run_id = self._pending_resume
        box = QMessageBox(QMessageBox.Icon.Question, "Abandon run",
                          f"Abandon run {run_id}? Its record is kept, but it cannot be resumed.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.button(QMessageBox.StandardButton.Yes).setText("Abandon it")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.finished.connect(lambda _result: self.abandon_journaled(run_id)
                             if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes else None)
        self.abandon_box = box
        box.open()

    def abandon_journaled(self, run_id: str) -> None:
        try:
            abandon_run(self.journal, run_id)
        except (InputError, JournalError) as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return
        self.interrupted_bar.hide()
        self.refresh_runs()
        self.show_journaled(run_id)

    # -- geometry ----------------------------------------------------------------------
