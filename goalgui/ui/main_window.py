"""The main window: it builds the widgets and wires them; behaviour lives in the widgets and models."""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QSettings, QSortFilterProxyModel, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from .. import paths
from ..engine import events as ev
from ..engine.lifecycle import InputError, RunState
from ..engine.record import INTERRUPTED, RunRecord
from ..engine.run import Run
from ..journal import JournalError
from .bridge import EventBridge
from .budget_panel import BudgetPanel
from .confirm_dialog import DialogConfirmer
from .controls import ControlBar, modeline
from .inspect_bar import InspectBar
from .new_goal import NewGoalDialog
from .panes import CallLog, GoalDetail, RunsView
from .tree_model import GOAL_ID_ROLE, STATUS_MARK, STATUS_ROLE, GoalTreeModel

log = logging.getLogger(__name__)


class GoalFilter(QSortFilterProxyModel):
    """Status filter and text search over the tree; matches keep their ancestors, so the shape holds."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.status = ""
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(0)

    def set_status(self, status: str) -> None:
        if status == self.status:
            return
        if hasattr(self, "beginFilterChange"):  # Qt 6.10 replaced invalidateFilter()
            self.beginFilterChange()
            self.status = status
            self.endFilterChange()
        else:
            self.status = status
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent) -> bool:
        index = self.sourceModel().index(row, 0, parent)
        if self.status and self.sourceModel().data(index, STATUS_ROLE) != self.status:
            return False
        return super().filterAcceptsRow(row, parent)


class MainWindow(QMainWindow):
    """Watch a run live, steer it, start new ones, and open finished ones."""

    def __init__(self, journal, settings, parent=None):
        super().__init__(parent)
        self.journal = journal
        self.settings = settings
        self.run: Run | None = None
        self.mirror = RunRecord()
        self.calls = CallLog()
        self._seen_seq = 0
        self._followed: str | None = None
        self.confirmer = DialogConfirmer(self)
        self.new_goal_dialog: NewGoalDialog | None = None
        self.session = None  # the goal-mode conversation, made on the first message
        self.setWindowTitle("goalgui")
        self._build()
        self._connect_signals()
        self._restore_geometry()
        self.refresh_runs()
        self._offer_interrupted()

    # -- building ----------------------------------------------------------------

    def _build(self) -> None:
        self.tree_model = GoalTreeModel(self)
        self.proxy = GoalFilter(self)
        self.proxy.setSourceModel(self.tree_model)
        self.tree = QTreeView()
        self.tree.setModel(self.tree_model)  # the filter proxy only while a filter is on: it costs per row
        self.tree.setUniformRowHeights(True)
        self.tree.setSortingEnabled(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.header().setStretchLastSection(False)
        self.tree.setColumnWidth(0, 380)
        self.follow_box = QCheckBox("Follow")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Keep the running goal in view")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search goals…")
        self.status_filter = QComboBox()
        self.status_filter.addItem("all statuses", "")
        for status, mark in STATUS_MARK.items():
            self.status_filter.addItem(f"{mark} {status}", status)
        filters = QHBoxLayout()
        filters.addWidget(self.search, 1)
        filters.addWidget(self.status_filter)
        filters.addWidget(self.follow_box)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(filters)
        left_layout.addWidget(self.tree)
        self.detail = GoalDetail()
        self.budgets = BudgetPanel()
        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.addWidget(self.detail)
        self.right_split.addWidget(self.budgets)
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.addWidget(left)
        self.main_split.addWidget(self.right_split)
        self.main_split.setSizes([640, 560])
        self.right_split.setSizes([330, 420])
        self.controls = ControlBar()
        self.controls.selected_goal = self._selected_goal_id
        self.modeline = QLabel("no run")
        self.modeline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chat_log = QPlainTextEdit()
        self.chat_log.setReadOnly(True)
        self.chat_log.setMaximumHeight(90)
        self.chat_log.setPlaceholderText("Talk to the agent below: it may propose a goal, which you confirm.")
        self.command = QLineEdit()
        self.command.setPlaceholderText("Message the agent, or /goal, /goal new TEXT, /goal pause|resume|cancel|skip")
        self.interrupted_bar = QFrame()
        self.interrupted_bar.setStyleSheet("QFrame { background: #fcf3cf; border-radius: 4px; }")
        self.interrupted_label = QLabel()
        self.interrupted_resume = QPushButton("Resume")
        self.interrupted_abandon = QPushButton("Abandon")
        bar_layout = QHBoxLayout(self.interrupted_bar)
        bar_layout.addWidget(self.interrupted_label, 1)
        bar_layout.addWidget(self.interrupted_resume)
        bar_layout.addWidget(self.interrupted_abandon)
        self.interrupted_bar.hide()
        run_page = QWidget()
        run_layout = QVBoxLayout(run_page)
        run_layout.addWidget(self.interrupted_bar)
        self.inspect = InspectBar()
        self.inspect.hide()
        run_layout.addWidget(self.inspect)
        run_layout.addWidget(self.main_split, 1)
        run_layout.addWidget(self.controls)
        run_layout.addWidget(self.modeline)
        run_layout.addWidget(self.chat_log)
        run_layout.addWidget(self.command)
        self.runs_view = RunsView()
        self.tabs = QTabWidget()
        self.tabs.addTab(run_page, "Run")
        self.tabs.addTab(self.runs_view, "Runs")
        self.setCentralWidget(self.tabs)
        self.new_goal_action = QAction("New goal…", self)
        self.new_goal_action.setShortcut(QKeySequence("Ctrl+N"))
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        toolbar.addAction(self.new_goal_action)
        self.bridge = EventBridge(self)
        self.tick = QTimer(self)
        self.tick.setInterval(1000)

    def _connect_signals(self) -> None:
        self.bridge.events_committed.connect(self._on_bridge_events_committed)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
        self.search.textChanged.connect(self._on_filters_changed)
        self.status_filter.currentIndexChanged.connect(self._on_filters_changed)
        self.controls.error.connect(self._on_controls_error)
        self.command.returnPressed.connect(self._on_command_return_pressed)
        self.runs_view.run_opened.connect(self.show_journaled)
        self.runs_view.refresh_button.clicked.connect(self.refresh_runs)
        self.new_goal_action.triggered.connect(self.open_new_goal)
        self.interrupted_resume.clicked.connect(self._on_interrupted_resume_clicked)
        self.interrupted_abandon.clicked.connect(self._on_interrupted_abandon_clicked)
        self.inspect.moment_chosen.connect(self._on_inspect_moment_chosen)
        self.tick.timeout.connect(self._update_status)
        self.tick.start()

    # -- following and opening runs ------------------------------------------------

    def follow(self, run: Run) -> None:
        """Watch `run` live: what the journal already holds, then each committed batch."""
        self.bridge.detach()
        self.run = run
        self.inspect.hide()
        self._show_events(self.journal.events(run.run_id))
        self.bridge.attach(run)
        self.controls.bind(run)
        self.tabs.setCurrentIndex(0)

    def show_journaled(self, run_id: str) -> None:
        """Open a journaled run read-only; a paused or blocked one can be resumed from here."""
        self.bridge.detach()
        self.run = None
        self.controls.bind(None)
        self._journaled = list(self.journal.events(run_id))
        self._show_events(self._journaled)
        self.inspect.show_run(self._journaled, self.mirror)
        self.inspect.show()
        if self.mirror.state is RunState.ACTIVE and not self.journal.owner_alive(run_id):
            self.mirror = self.journal.view(run_id)  # its process is gone: it is paused
        self.interrupted_bar.setVisible(self.mirror.state in (RunState.PAUSED, RunState.BLOCKED)
                                        and not self.journal.owner_alive(run_id))
        self.interrupted_label.setText(f"Run {run_id} is {self.mirror.state.value}: {self.mirror.stop_reason or ''}")
        self._pending_resume = run_id
        self.tabs.setCurrentIndex(0)
        self._update_status()

    def _on_inspect_moment_chosen(self, n: int) -> None:
        """Time travel: the tree and plots as they were after event n."""
        self._show_events(self._journaled[:n])
        self.inspect.show_moment(self.mirror, n)
        self._update_status()

    def _show_events(self, events) -> None:
        events = list(events)
        self.mirror = RunRecord()
        self.calls.clear()
        self.tree_model.clear()
        self.budgets.show_record(self.mirror)
        self._seen_seq = 0
        self._apply(events)
        self.tree.expandToDepth(1)

    def _apply(self, batch) -> None:
        fresh = [e for e in batch if e.seq > self._seen_seq]
        if not fresh:
            return
        self._seen_seq = fresh[-1].seq
        for e in fresh:
            self.mirror.apply(e)
        self.calls.apply(fresh)
        self.tree_model.apply(fresh)
        self.budgets.on_batch(fresh)
        if self.follow_box.isChecked() and self.isVisible():
            running = next((e.goal_id for e in reversed(fresh) if type(e) is ev.TurnStarted and e.goal_id), None)
            if running is not None and running != self._followed:
                self._followed = running
                index = self._view_index(self.tree_model.index_of(running))
                if index.isValid():
                    self.tree.scrollTo(index)
        self.controls.refresh()
        self._update_status()

    def _on_bridge_events_committed(self, batch) -> None:
        self._apply(batch)
        current = self._selected_goal_id()
        if current and any(getattr(e, "goal_id", None) == current for e in batch):
            self.detail.show_goal(self.mirror, self.calls, current)

    def _update_status(self) -> None:
        waiting = bool(self.confirmer.open_dialogs)
        self.modeline.setText(modeline(self.mirror if self.mirror.run_id else None, waiting))
        self.setWindowTitle(("⏳ " if waiting else "") + f"goalgui — {self.mirror.objective[:60]}"
                            if self.mirror.run_id else "goalgui")

    def _selected_goal_id(self) -> str | None:
        index = self.tree.selectionModel().currentIndex()
        return self.tree.model().data(index.siblingAtColumn(0), GOAL_ID_ROLE) if index.isValid() else None

    def _view_index(self, source_index):
        return self.proxy.mapFromSource(source_index) if self.tree.model() is self.proxy else source_index

    def _on_filters_changed(self, *_args) -> None:
        """Filter through the proxy while a search or status is set; show the model itself otherwise."""
        self.proxy.setFilterFixedString(self.search.text())
        self.proxy.set_status(self.status_filter.currentData() or "")
        wanted = self.proxy if (self.search.text() or self.status_filter.currentData()) else self.tree_model
        if self.tree.model() is not wanted:
            self.tree.setModel(wanted)
            self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
            self.tree.expandToDepth(1)

    def _on_tree_current_changed(self, current, _previous) -> None:
        self.detail.show_goal(self.mirror, self.calls, self._selected_goal_id())
        self.controls.refresh()

    def _on_controls_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 8000)

    # -- starting work ---------------------------------------------------------------

    def model_choices(self) -> list[str]:
        return ["local", "scripted:rehearsal"] + [f"{p.kind}:{p.name}" for p in self.settings.profiles.values()]

    def open_new_goal(self) -> NewGoalDialog:
        dialog = NewGoalDialog(self.model_choices(), self.settings.default_model,
                               self.settings.default_permission_mode, self)
        dialog.accepted_goal.connect(self.start_goal)
        dialog.draft_requested.connect(lambda intent, spec: asyncio.ensure_future(self._draft(dialog, intent, spec)))
        self.new_goal_dialog = dialog
        dialog.show()
        return dialog

    async def _draft(self, dialog: NewGoalDialog, intent: str, spec: str) -> None:
        from ..engine.session import GoalSession
        from ..providers import load_model

        try:
            model, _ = await asyncio.to_thread(load_model, spec)
            dialog.fill(await GoalSession(model).draft(intent))
        except Exception as exc:  # one line for the person; the detail in the log
            log.info("drafting failed", exc_info=True)
            dialog.error.setText(f"could not draft: {exc}")
        finally:
            dialog.draft_button.setEnabled(True)

    def start_goal(self, goal: dict) -> Run | None:
        from ..providers import load_model

        try:
            model, spec = load_model(goal["model"])
            run = Run.create(goal["objective"], model, model_spec=spec, strategy=goal["strategy"],
                             limits=goal["limits"], permission_mode=goal["mode"], criteria=goal["criteria"],
                             sink=self.journal, confirmer=self.confirmer)
        except InputError as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return None
        self.run = run
        self.follow(run)
        run.start()
        self.refresh_runs()
        return run

    def _on_command_return_pressed(self) -> None:
        text = self.command.text().strip()
        self.command.clear()
        if not text:
            return
        if not text.startswith("/goal"):
            self.chat_task = asyncio.ensure_future(self.chat(text))
            return
        rest = text[len("/goal"):].strip()
        word, _, arg = rest.partition(" ")
        if not word:
            self.statusBar().showMessage(modeline(self.mirror if self.mirror.run_id else None), 10000)
        elif word == "new":
            self.start_goal({"objective": arg, "criteria": "", "strategy": self.settings.default_strategy,
                             "model": self.settings.default_model, "limits": self.mirror.limits.__class__(),
                             "mode": self.settings.default_permission_mode})
        elif word in ("pause", "resume", "cancel", "skip") and self.run is not None:
            button = {"pause": self.controls.pause_button, "resume": self.controls.resume_button,
                      "cancel": self.controls.cancel_button, "skip": self.controls.skip_button}[word]
            if button.isEnabled():
                button.click()
            else:
                self.statusBar().showMessage(f"/goal {word} is not possible while the run is "
                                             f"{self.run.state.value}", 8000)
        else:
            self.statusBar().showMessage(f"unknown command: {text}", 8000)

    async def chat(self, text: str) -> None:
        """One chat turn: the model may answer, and may propose a goal that the dialog confirms."""
        from ..engine.model import ProviderError
        from ..engine.session import GoalSession
        from ..providers import load_model

        self.chat_log.appendPlainText(f"you: {text}")
        try:
            if self.session is None:
                model, spec = await asyncio.to_thread(load_model, self.settings.default_model)
                self.session = GoalSession(model, model_spec=spec, sink=self.journal, confirmer=self.confirmer,
                                           permission_mode=self.settings.default_permission_mode,
                                           strategy=self.settings.default_strategy, on_run=self._on_session_run)
            reply = await self.session.send(text)
        except (InputError, ProviderError) as exc:
            self.chat_log.appendPlainText(f"(not sent: {exc})")
            return
        if reply.text.strip():
            self.chat_log.appendPlainText(f"agent: {reply.text.strip()}")
        for result in reply.tool_results:
            if "error" in result["result"]:
                self.chat_log.appendPlainText(f"({result['name']}: {result['result']['error']})")

    def _on_session_run(self, run: Run) -> None:
        self.follow(run)
        self.refresh_runs()

    # -- the journal -----------------------------------------------------------------

    def refresh_runs(self) -> None:
        self.runs_view.show_runs(self.journal.runs())

    def _offer_interrupted(self) -> None:
        interrupted = [r for r in self.journal.runs() if r["state"] == "paused" and r["stop_reason"] == INTERRUPTED]
        if interrupted:
            latest = interrupted[0]
            self._pending_resume = latest["run_id"]
            self.interrupted_label.setText(
                f"{len(interrupted)} run(s) were active when goalgui last stopped and are paused now. "
                f"Latest: {latest['objective'][:70]}")
            self.interrupted_bar.show()

    def resume_journaled(self, run_id: str) -> Run | None:
        from ..providers import load_model

        try:
            record = self.journal.load(run_id)
            self.journal.claim(run_id)
            model, _ = load_model(record.model)
            run = Run.restore(record, model, sink=self.journal, confirmer=self.confirmer)
            run.resume()
        except (InputError, JournalError) as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return None
        self.interrupted_bar.hide()
        self.follow(run)
        run.start()
        return run

    def _on_interrupted_resume_clicked(self) -> None:
        self.resume_journaled(self._pending_resume)

    def _on_interrupted_abandon_clicked(self) -> None:
        run_id = self._pending_resume
        record = self.journal.load(run_id)
        self.journal.claim(run_id)
        run = Run.restore(record, _NoModel(), sink=self.journal)
        run.cancel("abandoned after an interruption")
        self.journal.release(run_id)
        self.interrupted_bar.hide()
        self.refresh_runs()
        self.show_journaled(run_id)

    # -- geometry ----------------------------------------------------------------------

    def _qsettings(self) -> QSettings:
        return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)

    def _restore_geometry(self) -> None:
        s = self._qsettings()
        if s.value("geometry") is not None:
            self.restoreGeometry(s.value("geometry"))
        else:
            self.resize(1280, 820)
        for name, splitter in (("main_split", self.main_split), ("right_split", self.right_split)):
            if s.value(name) is not None:
                splitter.restoreState(s.value(name))

    def closeEvent(self, event) -> None:
        s = self._qsettings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("main_split", self.main_split.saveState())
        s.setValue("right_split", self.right_split.saveState())
        s.sync()
        if self.run is not None and self.run.state is RunState.ACTIVE:
            self.run.pause("paused: the window was closed")
        super().closeEvent(event)


class _NoModel:
    name = "none"

    async def complete(self, request):
        raise RuntimeError("no model is loaded to abandon a run")
