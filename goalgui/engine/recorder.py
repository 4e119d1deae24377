"""Emits events: applies each to the run's record at once, commits them in batches, then publishes.

Events are written to the sink (the journal) in one transaction by a flush
scheduled on the event loop; only after the commit do subscribers see them.
The flush runs at the next loop turn, but no sooner than BATCH_SECONDS after
the previous one: a slow model's progress shows at once, while a fast model
that emits tens of thousands of events a second costs about fifty
transactions a second, not one per event or per step.

The write is synchronous on the loop's thread. A writer thread was measured
and lost: SQLite binds every row holding the GIL, so the two threads convoyed
and both ran slower (benchmarks/engine_bench.py). The write never waits on
the loop for another process's write lock: the sink says it is busy
(SinkBusy) and the batch, kept, is tried again with what came after it, a
little later, while the run goes on; only a lock held past BUSY_GIVE_UP fails
the run's journal.
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
BUSY_RETRY = (0.02, 0.5)  # first and longest pause before a busy sink is tried again
BUSY_GIVE_UP = 10.0  # seconds of a busy sink before the run's journal is failed


class SinkBusy(Exception):
    """The sink cannot take a batch now (another process holds its write lock); nothing was written."""


class EventSink(Protocol):
    """Where events are made durable (the journal). `write` commits or raises; on the event loop's
    thread it raises SinkBusy rather than wait for a lock held elsewhere."""

    def write(self, run_id: str, events: Sequence[Event], snapshot: dict | None = None, *,
              wait: bool | None = None) -> None: ...


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
        self._busy_since: float | None = None
        self._busy_pause = BUSY_RETRY[0]
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

    @property
    def pending(self) -> int:
        """Events emitted and not yet committed."""
        return len(self._pending)

    def flush(self, wait: bool | None = None) -> None:
        """Commit what is pending, then publish it. Safe to call at any time. `wait`: whether the
        sink may wait for a lock held elsewhere (by default, not on an event loop's thread)."""
        self._scheduled = False
        if not self._pending:
            return
        self._last_flush = time.monotonic()
        batch, self._pending = self._pending, []
        if self.error is not None:  # after a failed write nothing more is written or shown
            return
        if self.sink is not None:
            try:
                self.sink.write(self.record.run_id, batch, self.record.snapshot(), wait=wait)
            except SinkBusy as exc:
                self._pending = batch + self._pending
                if wait:  # it waited as long as it would
                    self.error = exc
                else:
                    self._retry_later(exc)
                return
            except BaseException as exc:  # the journal failed: nobody may see unwritten events
                log.exception("could not write %d events to the journal", len(batch))
                self.error = exc
                return
            self._busy_since = None
            self._busy_pause = BUSY_RETRY[0]
        for callback in list(self._subscribers):
            try:
                callback(batch)
            except Exception:
                log.exception("an event subscriber failed")

    def _retry_later(self, exc: SinkBusy) -> None:
        now = time.monotonic()
        if self._busy_since is None:
            self._busy_since = now
            log.info("the journal is busy (another process holds its write lock): %d events wait", len(self._pending))
        elif now - self._busy_since >= BUSY_GIVE_UP:
            self.error = exc
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: the sink waited as long as it would (see Journal._transaction)
            self.error = exc
            return
        self._scheduled = True
        loop.call_later(self._busy_pause, self.flush)
        self._busy_pause = min(self._busy_pause * 2, BUSY_RETRY[1])

    async def drain(self) -> None:
        """Flush, and while the sink is busy try again, until all is committed or the write failed."""
        self.flush()
        while self._pending and self.error is None:
            await asyncio.sleep(self._busy_pause)
            self.flush()

