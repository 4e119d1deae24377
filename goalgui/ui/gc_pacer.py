"""Keep Python's cyclic garbage collector from stalling the window.

A full (generation 2) collection walks every tracked object; with a live run's goals, its
tree and the loaded libraries that is tens of milliseconds at ten thousand goals and grows
with the run, and it lands in the middle of whatever the event loop was doing. The pacer
moves what has survived into the permanent generation once a second (`gc.freeze()`, a
constant-time list splice), so collections only ever look at what was made since. Refcounting
still frees everything that is not in a cycle, frozen or not; goalgui's own data holds no
cycles (tree nodes name their parent by id), so what could be missed is cyclic garbage that
outlives its second, which is rare (a cancelled step's traceback) and small.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

FREEZE_MS = 1000


class GcPacer(QObject):
    def __init__(self, parent: QObject | None = None, interval_ms: int = FREEZE_MS):
        super().__init__(parent)
        gc.freeze()  # what start-up loaded (Qt bindings, pyqtgraph, numpy) is never garbage
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        gc.collect(1)  # the young generations first (cheap), so fresh cyclic garbage is not frozen
        gc.freeze()
