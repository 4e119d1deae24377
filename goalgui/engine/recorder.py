"""Emits events: applies each to the run's record at once, commits them in batches, then publishes.

Events are written to the sink (the journal) in one transaction by a flush
scheduled on the event loop; only after the commit do subscribers see them.
The flush runs at the next loop turn, but no sooner than BATCH_SECONDS after
the previous one: a slow model's progress shows at once, while a fast model
that emits tens of thousands of events a second costs about fifty
transactions a second, not one per event or per step.

The write is synchronous on the loop's thread. A writer thread was measured
and lost: SQLite binds every row holding the GIL, so the two threads convoyed
and both ran slower (benchmarks/engine_bench.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable, Protocol, Sequence

from .events import Event
from .record import RunRecord

log = logging.getLogger(__name__)

Subscriber = Callable[[Sequence[Event]], None]
BATCH_SECONDS = 0.02


class EventSink(Protocol):
    """Where events are made durable (the journal). `write` commits or raises."""

    def write(self, run_id: str, events: Sequence[Event], snapshot: dict | None = None) -> None: ...


class Recorder:
    """Numbers, applies, batches and publishes one run's events."""

    def __init__(self, record: RunRecord, sink: EventSink | None = None, clock=time.time):
        self.record = record
        self.sink = sink
        self.clock = clock
        self.seq = record.last_seq
        self.error: BaseException | None = None
        self._pending: list[Event] = []
        self._scheduled = False
        self._last_flush = 0.0
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def emit(self, cls: type[Event], **fields) -> Event:
        self.seq += 1
        event = cls(seq=self.seq, ts=self.clock(), **fields)
        self.record.apply(event)
        self._pending.append(event)
        if not self._scheduled:
            self._scheduled = True
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a synchronous caller): commit now
                self.flush()
            else:
                wait = self._last_flush + BATCH_SECONDS - time.monotonic()
                if wait > 0:
                    loop.call_later(wait, self.flush)
                else:
                    loop.call_soon(self.flush)
        return event

    def flush(self) -> None:
        """Commit what is pending, then publish it. Safe to call at any time."""
        self._scheduled = False
        if not self._pending:
            return
        self._last_flush = time.monotonic()
        batch, self._pending = self._pending, []
        if self.error is not None:  # after a failed write nothing more is written or shown
            return
        if self.sink is not None:
            try:
                self.sink.write(self.record.run_id, batch, self.record.snapshot())
            except BaseException as exc:  # the journal failed: nobody may see unwritten events
                log.exception("could not write %d events to the journal", len(batch))
                self.error = exc
                return
        for callback in list(self._subscribers):
            try:
                callback(batch)
            except Exception:
                log.exception("an event subscriber failed")
