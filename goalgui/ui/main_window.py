"""The main window: it builds the widgets and wires them; behaviour lives in the widgets and models."""

from __future__ import annotations

import asyncio
import logging
import time

from PySide6.QtCore import QEvent, QPersistentModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QSystemTrayIcon,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .. import paths
from ..engine import events as ev
from ..engine.lifecycle import RunState
from ..engine.record import RunRecord, plot_marks
from ..engine.run import Run
from ..engine.health import health as strategy_health
from ..report import health
from ..terminal import shown
from .bridge import EventBridge
from .budget_panel import BudgetPanel
from .confirm_dialog import DialogConfirmer
from .controls import ControlBar, now_doing, status_line
from .gc_pacer import GcPacer
from .icon import app_icon
from .theme import is_dark
from .inspect_bar import InspectBar, health_text
from .new_goal import NewGoalDialog
from .panes import GoalDetail, RunsView
from .plan_pane import PlanPane
from .strategy_pane import SHOWN, StrategyPane
from .tree_view import GoalTreeView
from .tree_model import STATUS_MARK, GoalTreeModel
from .plain import plain_label
from .window_current import CurrentGoal
from .window_history import RunHistory
from .window_journaled import JournaledRuns
from .window_remote import RemoteControls
from .window_tree import GoalFilter, TreeFollowing

log = logging.getLogger(__name__)
STATUS_MS = 200  # the status line's figures refresh this often; state changes show at once
RUNS_MS = 2000  # the Runs tab rereads the journal this often while it is shown
HEALTH_TICKS = 5  # a live run's health numbers (a pass over its goals) once a second
_STEERING_EVENTS = (ev.ConfirmationAsked, ev.ConfirmationAnswered, ev.PermissionModeChanged, ev.LimitsChanged)


class MainWindow(CurrentGoal, JournaledRuns, RunHistory, RemoteControls, TreeFollowing, QMainWindow):
    """Watch a run live, steer it, start new ones, and open finished ones."""

    moment_shown = Signal(int)  # the timeline's moment is on screen

    def __init__(self, journal, settings, parent=None):
        super().__init__(parent)
        self.journal = journal
        self.settings = settings
        self._tray_waiting = False
        self.run: Run | None = None  # the live run followed
        self._driven: dict[str, Run] = {}  # runs this window started or resumed
        self._current: Run | None = None  # the window's one current goal (seed 001): the last started or resumed
        self.launch_model: str | None = None  # the model the window was started with (`goalgui run --model`)
        self._closing_asked = False
        self.record: RunRecord | None = None  # the record shown (the live run's, or a moment's)
        self.summary: dict | None = None  # a journaled run shown from its projection (Journal.summary)
        self.run_summary = ""  # a journaled run's wrap-up (a live run's is its record's)
        self.shown_run_id: str | None = None
        self.shown_seq = 0  # the last event shown
        self._moment_generation = 0
        self._followed: str | None = None
        self._running_goal: str | None = None
        self._auto_expanded: set[QPersistentModelIndex] = set()  # goals following opened, to fold again
        self._expanding = False
        self._sort_order = Qt.SortOrder.AscendingOrder
        self.tray = self._make_tray()
        self.confirmer = DialogConfirmer(self, timeout_s=settings.confirm_timeout, tray=self.tray)
        self.new_goal_dialog: NewGoalDialog | None = None
        self.session = None  # the goal-mode conversation, made on the first message
        self.setWindowTitle("goalgui")
        self._build()
        self._connect_signals()
        self._restore_geometry()
        self._restyle()
        self.refresh_runs()
        self._offer_interrupted()

    # -- building ----------------------------------------------------------------

    def _make_tray(self) -> QSystemTrayIcon | None:
        """A tray icon where the desktop has a tray: its tooltip is the status line, it says when a
        confirmation waits, and a click brings the window back."""
        self.setWindowIcon(app_icon())
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return None
        tray = QSystemTrayIcon(app_icon(), self)
        menu = QMenu(self)
        menu.addAction("Show goalgui", self._on_tray_show)
        menu.addAction("Quit", self.close)
        tray.setContextMenu(menu)
        tray.activated.connect(lambda _reason: self._on_tray_show())
        tray.show()
        return tray

    def _on_tray_show(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()


    def _build(self) -> None:
        self.tree_model = GoalTreeModel(self)
        self.proxy = GoalFilter(self)
        self.tree = GoalTreeView()
        self.tree.setModel(self.tree_model)  # the filter proxy only while a filter is on: it costs per row
        self.tree.setUniformRowHeights(True)
        self.tree.setSortingEnabled(False)  # the header sorts through the proxy, see _on_sort_requested
        self.tree.header().setSectionsClickable(True)
        self.tree.header().setSortIndicatorShown(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)  # Fork from here
        self.tree.customContextMenuRequested.connect(self._on_tree_context_menu)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(36)
        header.moveSection(3, 1)  # status right after the goal: a narrow window never pushes it off screen
        for column, width in ((1, 48), (2, 44), (3, 200), (4, 64), (5, 58), (6, 60)):
            self.tree.setColumnWidth(column, width)
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
        self.plan = PlanPane()  # the cursor's plan, beside the tree
        left_layout.addWidget(self.plan)
        self.strategy_pane = StrategyPane()  # the task loop's queue, the plan's graph
        self.strategy_pane.goalChosen.connect(self._choose_goal)
        self.left_split = QSplitter(Qt.Orientation.Vertical)
        self.left_split.addWidget(self.strategy_pane)
        self.left_split.addWidget(self.tree)
        self.left_split.setStretchFactor(1, 1)
        self.left_split.setSizes([300, 400])
        left_layout.addWidget(self.left_split)
        self.detail = GoalDetail()
        self.budgets = BudgetPanel()
        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.addWidget(self.detail)
        self.right_split.addWidget(self.budgets)
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.addWidget(left)
        self.main_split.addWidget(self.right_split)
        self.main_split.setSizes([640, 560])
        self.right_split.setSizes([190, 560])  # the plot keeps its height in a small window
        self.right_split.setStretchFactor(1, 1)
        self.controls = ControlBar()
        self.controls.selected_goal = self._selected_goal_id
        self.modeline = plain_label("no run")
        self.modeline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chat_log = QPlainTextEdit()
        self.chat_log.setReadOnly(True)
        self.chat_log.setMinimumHeight(3 * self.fontMetrics().lineSpacing() + 10)  # a few lines, and resizable
        self.chat_log.setPlaceholderText("Talk to the agent below: it may propose a goal, which you confirm.")
        self.command = QLineEdit()
        self.command.setPlaceholderText("Message the agent, or /goal, /goal new TEXT, /goal pause|resume|cancel|skip|clear")
        self.interrupted_bar = QFrame()
        self.interrupted_label = plain_label()
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
        work = QWidget()  # the tree, detail and plots, with the controls and the status under them
        work_layout = QVBoxLayout(work)
        work_layout.setContentsMargins(0, 0, 0, 0)
        work_layout.addWidget(self.main_split, 1)
        work_layout.addWidget(self.controls)
        work_layout.addWidget(self.modeline)
        self.health_line = plain_label()  # a live run's health; a journaled one's is in the inspect bar
        for line in (self.modeline, self.health_line):  # a long line is cut, never widens the window
            line.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        work_layout.addWidget(self.health_line)
        chat = QWidget()
        chat_layout = QVBoxLayout(chat)
        chat_layout.setContentsMargins(0, 0, 0, 0)
        chat_layout.addWidget(self.chat_log, 1)
        chat_layout.addWidget(self.command)
        self.run_split = QSplitter(Qt.Orientation.Vertical)  # the work above, the conversation below
        self.run_split.addWidget(work)
        self.run_split.addWidget(chat)
        self.run_split.setStretchFactor(0, 1)
        self.run_split.setCollapsible(0, False)
        self.run_split.setCollapsible(1, False)
        self.run_split.setSizes([640, 4 * self.fontMetrics().lineSpacing() + 40])
        run_layout.addWidget(self.run_split, 1)
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
        self.settings_action = QAction("Settings…", self)
        self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        toolbar.addAction(self.settings_action)
        self.settings_dialog = None
        self.bridge = EventBridge(self)
        self.gc_pacer = GcPacer(self)
        self.tick = QTimer(self)
        self.tick.setInterval(STATUS_MS)
        self.runs_timer = QTimer(self)  # the Runs tab follows the journal while it is shown
        self.runs_timer.setInterval(RUNS_MS)
        self._ticks = 0

    def _connect_signals(self) -> None:
        self.bridge.events_committed.connect(self._on_bridge_events_committed)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
        self.search.textChanged.connect(self._on_filters_changed)
        self.status_filter.currentIndexChanged.connect(self._on_filters_changed)
        self.controls.error.connect(self._on_controls_error)
        self.command.returnPressed.connect(self._on_command_return_pressed)
        self.runs_view.run_opened.connect(self.show_journaled)
        self.runs_view.compare_requested.connect(self.compare_runs)
        self.runs_view.refresh_button.clicked.connect(self.refresh_runs)
        self.new_goal_action.triggered.connect(self.open_new_goal)
        self.settings_action.triggered.connect(self.open_settings)
        self.interrupted_resume.clicked.connect(self._on_interrupted_resume_clicked)
        self.interrupted_abandon.clicked.connect(self._on_interrupted_abandon_clicked)
        self.inspect.moment_chosen.connect(self._on_inspect_moment_chosen)
        self.inspect.exported.connect(lambda message: self.statusBar().showMessage(message, 8000))
        self.tree.verticalScrollBar().actionTriggered.connect(self._on_tree_scrolled_by_hand)
        self.follow_box.toggled.connect(self._on_follow_box_toggled)
        self.tree.expanded.connect(self._on_tree_expanded_by_hand)
        self.tree.header().sectionClicked.connect(self._on_tree_header_clicked)
        self.tick.timeout.connect(self._on_tick_timeout)
        self.tick.start()
        self.runs_timer.timeout.connect(self._on_runs_timer_timeout)
        self.runs_timer.start()
        self.tabs.currentChanged.connect(lambda _i: self._on_runs_timer_timeout())

    # -- following and opening runs ------------------------------------------------
    #
    # What is shown is one of three things: the live run (`self.run`: its own record, its
    # committed batches through the bridge), a journaled run (the journal's projection, read
    # lazily, and its series), or a moment of a journaled run (a record replayed up to an event).

    def follow(self, run: Run, drive: bool = True) -> None:
        """Watch `run` live: what it holds already, then each committed batch. `drive` False: another
        process drives it (an `AttachedRun`): closing the window leaves it be."""
        self.bridge.detach()
        self._moment_generation += 1
        self._forget_finished()
        if drive:
            self._driven[run.run_id] = run  # opening it from the Runs view comes back here
        self.run = run
        self.record = run.record
        self.summary = None
        self.shown_run_id = run.run_id
        self.inspect.hide()
        self.interrupted_bar.hide()
        self.health_line.clear()
        self.health_line.show()
        self._followed = self._running_goal = None
        self._auto_expanded.clear()
        self.tree_model.load_record(run.record)
        self.plan.show_record(run.record)
        self.strategy_pane.show_record(run.record)
        self.shown_seq = run.record.last_seq
        self._live_state = run.record.state
        self.budgets.load_series(self.journal.series(run.run_id), start=run.record.started_at)
        # the last step reaches "now" while the run can still change (waiting is flat, not a gap)
        self.budgets.live_clock = lambda: None if run.state.final else time.time()
        self.tree.expandToDepth(1)
        self.bridge.attach(run)
        self.controls.bind(run)
        self.tabs.setCurrentIndex(0)
        self._show_selected()
        self._update_status()

    def _forget_finished(self) -> None:
        """Runs that can no longer change are read from the journal like any other: let them go."""
        for run_id, run in list(self._driven.items()):
            if run.state.final:
                del self._driven[run_id]

    @property
    def shown_state(self) -> RunState | None:
        """The state of the run as far as the window has been told (live: its latest batch handed on)."""
        if self.run is not None:
            return self._live_state
        if self.record is not None:
            return self.record.state
        if self.summary is not None:
            return RunState(self.summary["state"])
        return None

    async def _show_moment(self, run_id: str, n: int, generation: int) -> None:
        record, series, at = await asyncio.to_thread(
            lambda: (self.journal.load(run_id, upto=n), self.journal.series(run_id, upto=n),
                     self.journal.event_at(run_id, n)))
        if generation != self._moment_generation:  # the slider moved on, or another run was opened
            return
        self.record = record
        self.shown_seq = n
        self.tree_model.load_record(record)
        self.plan.show_record(record)
        self.strategy_pane.show_record(record)
        self.tree.expandToDepth(1)
        self.budgets.load_series(series + [(n, {**record.snapshot(), "marks": []})], start=record.started_at)
        self.inspect.show_moment(n, record.updated_at - record.started_at,
                                 health_text(health(record), record.metrics.tokens_by_purpose,
                                             strategy_health(record)), at)
        self.statusBar().clearMessage()
        self._show_selected()
        self._update_status()
        self.moment_shown.emit(n)

    def _apply(self, batch) -> None:
        """A live batch: the tree, the plots, following the running goal, the controls and status."""
        fresh = [e for e in batch if e.seq > self.shown_seq]
        if not fresh or self.run is None:
            return
        self.shown_seq = fresh[-1].seq
        steering = False  # did anything change what the controls and status line say beyond the figures?
        for e in fresh:
            t = type(e)
            if t is ev.RunStateChanged:
                self._live_state = RunState(e.state)
                steering = True
            elif t in _STEERING_EVENTS:
                steering = True
        self.tree_model.apply(fresh)
        if self.plan.isVisible() or self.run.record.strategy == "cursor":
            self.plan.show_record(self.run.record)
        if self.strategy_pane.strategy in SHOWN:
            self.strategy_pane.show_record(self.run.record)
        self.budgets.add(self.run.record.snapshot(), plot_marks(fresh))
        running = next((e.goal_id for e in reversed(fresh) if type(e) is ev.TurnStarted and e.goal_id), None)
        if running is not None:
            self._running_goal = running
        if self.follow_box.isChecked() and self.isVisible():
            if running is not None and running != self._followed:
                self._follow_goal(running)
        if steering:  # the figures (tokens, goals, time) follow on the status timer
            self.controls.refresh()
            self._update_status()
            if any(type(e) is ev.RunStateChanged for e in fresh):  # the Runs tab's row says it at once
                self._on_runs_timer_timeout()  # read off the loop, and only while the tab is shown

    def _on_tick_timeout(self) -> None:
        """The figures of a live run (tokens, goals, elapsed) and what the controls allow, five times a second:
        per batch (30 Hz) it repainted half the window for numbers no one reads that fast."""
        if self.run is not None:
            self.controls.refresh()
            self._ticks += 1
            if self._ticks % HEALTH_TICKS == 0 or not self.health_line.text():
                rec = self.run.record
                self.health_line.setText(health_text(health(rec), rec.metrics.tokens_by_purpose, strategy_health(rec)))
        self._update_status()

    def _on_bridge_events_committed(self, batch) -> None:
        self._apply(batch)
        current = self._selected_goal_id()
        if current and any(getattr(e, "goal_id", None) == current for e in batch):
            self._show_selected()

    def _update_status(self) -> None:
        waiting = bool(self.confirmer.open_dialogs)
        if self.record is not None:
            totals = self.record.snapshot()
            if self.run is not None:
                totals["active"] = self.record.active_seconds(time.time())
            text = status_line(self.record.state.value, totals, self.record.stop_reason, waiting)
            if self.run is None and self.summary is not None and self.shown_seq < self.summary["last_seq"]:
                text = f"replay at event {self.shown_seq:,} of {self.summary['last_seq']:,}: {text}"
            objective = self.record.objective
        elif self.summary is not None:
            text = status_line(self.summary["state"], self.summary["totals"], self.summary["stop_reason"], waiting)
            objective = self.summary["objective"]
        else:
            text, objective = "no run" + ("  ·  WAITING FOR YOUR CONFIRMATION" if waiting else ""), ""
        workspace = self.record.options.get("workspace") if self.record is not None else None
        model = self.record.model if self.record is not None else None
        if self.summary is not None and self.record is None:
            started = self.summary.get("run_started") or {}
            workspace, model = (started.get("options") or {}).get("workspace"), started.get("model")
        state = self.shown_state
        reason = self.record.stop_reason if self.record is not None else (self.summary or {}).get("stop_reason")
        hit = self.record.last_call_goal if self.record is not None else None
        if self.tree_model.set_waiting(state.value if state is not None else None, reason, hit):
            self.tree.viewport().update()
        if self.run is not None:
            text += now_doing(self.run, time.time())
        self.modeline.setText(text + (f"  ·  model {shown(model)}" if model else "")
                              + (f"  ·  workspace {workspace}" if workspace else ""))
        if self.modeline.toolTip() != self.modeline.text():
            self.modeline.setToolTip(self.modeline.text())  # all of it, where a narrow window cuts it
        if self.tray is not None:
            self.tray.setToolTip(f"goalgui: {text}")
            if waiting != self._tray_waiting:
                self.tray.setIcon(app_icon(waiting))
                self._tray_waiting = waiting
        title = f"goalgui — {shown(objective)[:60]}" if objective else "goalgui"
        if self.journal.read_only:  # runs can be watched and exported, not started
            title += " (read-only journal)"
        self.setWindowTitle(("⏳ " if waiting else "") + title)

    def _on_controls_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 8000)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._restyle()
        super().changeEvent(event)

    def _restyle(self) -> None:
        """Colours this window draws itself, for the palette now in force (light or dark)."""
        dark = is_dark(self.palette())
        self.interrupted_bar.setStyleSheet("QFrame { background: %s; border-radius: 4px; }"
                                           % ("#5a4a12" if dark else "#fcf3cf"))
        self.budgets.restyle(self.palette())
        self.strategy_pane.restyle(self.palette())

    # -- the journal -----------------------------------------------------------------

    def _qsettings(self) -> QSettings:
        return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)

    def _restore_geometry(self) -> None:
        s = self._qsettings()
        if s.value("geometry") is not None:
            self.restoreGeometry(s.value("geometry"))
        else:
            self.resize(1280, 820)
        for name, splitter in (("main_split", self.main_split), ("right_split", self.right_split),
                               ("run_split", self.run_split)):
            if s.value(name) is not None:
                splitter.restoreState(s.value(name))

    def closeEvent(self, event) -> None:
        """Closing while a run works asks first, as desktop programs do; yes pauses it, then closes."""
        active = [run for run in self._driven.values() if run.state is RunState.ACTIVE]
        if active and not self._closing_asked:
            event.ignore()
            self._ask_before_closing(active)
            return
        s = self._qsettings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("main_split", self.main_split.saveState())
        s.setValue("right_split", self.right_split.saveState())
        s.setValue("run_split", self.run_split.saveState())
        s.sync()
        for run in list(self._driven.values()):  # the one shown and any left running behind another
            if run.state is RunState.ACTIVE:
                run.pause("paused: the window was closed")
        super().closeEvent(event)
