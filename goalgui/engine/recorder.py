"""Emits events: applies each to the run's record at once, commits them in batches, then publishes.

Events emitted during one turn of the event loop are written to the sink (the
journal) in one transaction by a flush scheduled with `call_soon`; only after
the commit do subscribers see them. A fast model thus costs one transaction per
loop turn, and a slow one shows its progress before the call returns.
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


class EventSink(Protocol):
    """Where events are made durable (the journal). `write` commits or raises."""

    def write(self, run_id: str, events: Sequence[Event]) -> None: ...


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
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no loop (a synchronous caller): commit now
                self.flush()
        return event

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        if self.sink is not None:
            try:
                self.sink.write(self.record.run_id, batch)
            except BaseException as exc:  # the journal failed: nobody may see unwritten events
                log.exception("could not write %d events to the journal", len(batch))
                self.error = exc
                return
        for callback in list(self._subscribers):
            try:
                callback(batch)
            except Exception:
                log.exception("an event subscriber failed")
