"""The one bridge from engine events to Qt: committed batches, gathered and handed on at 30 Hz.

The engine publishes a batch each time the journal commits; a fast model does that
about fifty times a second with thousands of events. The bridge collects them and
emits `events_committed` once per tick of a precise timer, so the tree inserts
one block per parent per tick and the plots redraw once, never per event.
"""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from ..engine import events as ev

FLUSH_MS = 33


class EventBridge(QObject):
    """Subscribes to a run and re-emits its committed events in ticks."""

    events_committed = Signal(list)

    def __init__(self, parent: QObject | None = None, interval_ms: int = FLUSH_MS):
        super().__init__(parent)
        self._pending: list[ev.Event] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timer_timeout)

    def attach(self, run) -> None:
        """Follow `run` (detaching from any other)."""
        self.detach()
        self._unsubscribe = run.subscribe(self.receive)
        self._timer.start()

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.flush()
        self._timer.stop()

    def receive(self, batch: Sequence[ev.Event]) -> None:
        """Called by the run (on the loop's thread, which is Qt's) after each commit."""
        self._pending.extend(batch)

    def flush(self) -> None:
        if self._pending:
            batch, self._pending = self._pending, []
            self.events_committed.emit(batch)

    def _on_timer_timeout(self) -> None:
        self.flush()
