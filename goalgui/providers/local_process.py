"""The embedded model in a child process, so a crash in llama.cpp costs one call, not the window.

A native fault (a SIGSEGV in a CPU kernel the build should not have used, an abort in a
grammar) kills the process it happens in; in-process that is goalgui itself, with the window
and every run in it. Here the model lives in a spawned child that serves one generation at a
time over a pipe: the parent sends the request, the child sends back the reply or the error.
Stop is a shared event the child checks between tokens and between graph nodes, as it does
in-process (a stop message wakes a reader thread in the child). If the child dies the call raises `ProviderUnavailable` naming the signal, so the
run parks (paused, with that reason) and the next call starts a new child.

Measured in benchmarks/local_bench.py against the in-process model: see the README.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading

from ..engine.model import ModelReply, ModelRequest, ProviderUnavailable

log = logging.getLogger(__name__)
POLL = 0.05  # seconds between looks at the stop flag while the child works
_HEADER = struct.Struct("!I")


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-code).name
        return f"signal {-code}"
    return f"exit code {code}"


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class ModelProcess:
    """One child process holding one loaded model; `generate` blocks, so call it off the loop."""

    def __init__(self, options: dict, fault_log: str | None = None):
        self.options = options  # LocalModel's keyword arguments, for the child's own copy
        self.fault_log = fault_log
        self._process: subprocess.Popen | None = None
        self._replies: list = []
        self._arrived = threading.Condition()
        self._lock = threading.Lock()  # one generation at a time
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _start(self) -> None:
        err = subprocess.DEVNULL
        if self.fault_log:
            with contextlib.suppress(OSError):
                err = os.open(self.fault_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self._process = subprocess.Popen(
                child_command(), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=err, env=dict(os.environ, PYTHONFAULTHANDLER="1"))
        finally:
            if isinstance(err, int) and err > 2:
                os.close(err)
        _send(self._process.stdin, ("options", self.options))
        self._replies = []
        threading.Thread(target=self._read, args=(self._process,), name="goalgui-llama-reader",
                         daemon=True).start()
        self.starts += 1

    def _read(self, process: subprocess.Popen) -> None:
        """Collect the child's messages; None marks its end."""
        while True:
            try:
                message = _receive(process.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                message = None
            with self._arrived:
                if process is self._process:
                    self._replies.append(message)
                    self._arrived.notify_all()
            if message is None:
                return

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def generate(self, request: ModelRequest, stop: threading.Event) -> ModelReply:
        with self._lock:
            if not self.alive():
                self._start()
            try:
                _send(self._process.stdin, ("generate", request))
            except OSError:
                return self._died()
            stopped = False
            with self._arrived:
                while not self._replies:
                    self._arrived.wait(POLL)
                    if stop.is_set() and not stopped and not self._replies:
                        stopped = True
                        with contextlib.suppress(OSError):
                            _send(self._process.stdin, ("stop", None))
                message = self._replies.pop(0)
            if message is None:
                return self._died()
        kind, value = message
        if kind == "error":
            raise _rebuild(*value)
        return value

    def _died(self) -> ModelReply:
        process, self._process = self._process, None
        _reap(process)
        how = _signal_name(process.returncode)
        where = f"; its stacks are in {self.fault_log}" if self.fault_log else ""
        log.error("the embedded model's process died (%s)", how)
        raise ProviderUnavailable(f"the embedded model's process died ({how}){where}")

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            with contextlib.suppress(OSError):
                process.stdin.close()  # the child ends on end of input
            _reap(process)


def _reap(process: subprocess.Popen) -> None:
    """Wait a little for the child to end, then kill it; close its pipes."""
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            stream.close()


def _rebuild(exc_type: str, message: str) -> Exception:
    from ..engine import model as errors
    from ..engine.lifecycle import InputError

    known = {"InputError": InputError, "BadResponse": errors.BadResponse,
             "ProviderUnavailable": errors.ProviderUnavailable}
    cls = known.get(exc_type)
    if cls is None:
        return ProviderUnavailable(f"the embedded model failed: {exc_type}: {message}")
    return cls(message)


CHILD_FLAG = "--goalgui-model-process"  # a bundle's executable is the child when given this first


def child_command() -> list[str]:
    """How to start the child: this interpreter on this module, or, in a PyInstaller bundle (which
    has no `-m`), the bundle's own executable with CHILD_FLAG (packaging/entry.py dispatches it)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_FLAG]
    return [sys.executable, "-m", "goalgui.providers.local_process"]


def child_main() -> None:
    # stdout carries the replies alone: anything else printed would corrupt them
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, out)


def serve(stdin, stdout) -> None:
    """The child: requests in order on the main thread; a reader thread takes stop messages."""
    from queue import Queue

    from .local import LocalModel

    kind, options = _receive(stdin)
    if kind != "options":
        raise SystemExit(2)
    model = LocalModel(isolate=False, **options)
    stop = threading.Event()
    work: Queue = Queue()

    def read() -> None:
        while True:
            try:
                message = _receive(stdin)
            except (EOFError, OSError):
                message = ("close", None)
            if message[0] == "stop":
                stop.set()
            else:
                if message[0] == "generate":
                    stop.clear()  # here, not when it is taken up: a stop may follow at once
                work.put(message)
            if message[0] == "close":
                stop.set()
                return

    threading.Thread(target=read, name="goalgui-llama-requests", daemon=True).start()
    try:
        while True:
            kind, request = work.get()
            if kind == "close":
                return
            try:
                reply = model.generate(request, stop)
            except Exception as exc:  # every failure goes back as one line; the child lives on
                _send(stdout, ("error", (type(exc).__name__, str(exc)[:500])))
            else:
                _send(stdout, ("reply", reply))
    finally:
        model.close()


if __name__ == "__main__":
    child_main()
