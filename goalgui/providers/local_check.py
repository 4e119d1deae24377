"""Prove that the embedded model generates on this machine: `python -m goalgui.providers.local_check`.

The setup runs this after installing, so a llama.cpp build that cannot run here (a native build
with AMX in a VM that does not grant it dies with SIGSEGV on the first decode) is found in seconds
and named in one line, instead of crashing on a user's first run. The generation runs in a child
process, so a native crash is reported rather than taking the checker with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

# CPU features a portable build must not use: they are what crashes where the CPU advertises a
# feature the VM does not grant
FORBIDDEN_FEATURES = ("AMX_INT8", "AVX512")
TIMEOUT = 120.0


def build_features() -> dict[str, bool]:
    """The CPU features the installed llama.cpp build uses, from llama_print_system_info()."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    features = {}
    # the info reads "CPU : SSE3 = 1 | AVX = 1 | ... |": name = value pairs
    for item in info.replace("CPU :", "|").split("|"):
        name, sep, value = item.partition("=")
        if sep and value.strip().isdigit():
            features[name.strip().split()[-1]] = value.strip() != "0"
    return features


def _child() -> int:
    import threading

    from ..engine.model import GoalView, ModelRequest
    from .local import LocalModel

    model = LocalModel(max_tokens=8)
    reply = model.generate(ModelRequest("execute", [{"role": "user", "content": "Say hello."}],
                                        GoalView("check", None, 0, "hello"), max_tokens=8),
                           threading.Event())
    model.close()
    print(reply.usage.output_tokens)
    return 0 if reply.usage.output_tokens > 0 else 1


def check() -> tuple[bool, str]:
    """(ok, one line): load SmolLM2 in a child process and generate a few tokens."""
    try:
        features = build_features()
    except ImportError:
        return False, "llama-cpp-python is not installed"
    used = [name for name in FORBIDDEN_FEATURES if features.get(name)]
    started = time.perf_counter()
    try:
        child = subprocess.run([sys.executable, "-m", "goalgui.providers.local_check", "--child"], capture_output=True, text=True,
                               timeout=TIMEOUT, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    except subprocess.TimeoutExpired:
        return False, f"the embedded model did not answer within {TIMEOUT:.0f} s"
    seconds = time.perf_counter() - started
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        hint = f" (the build uses {', '.join(used)})" if used else ""
        return False, f"the embedded model crashed with {name} on its first generation{hint}"
    if child.returncode != 0:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return False, f"the embedded model failed: {last[:200]!r}"
    if used:
        return False, f"llama.cpp was built with {', '.join(used)}, which can crash on other machines"
    return True, f"the embedded model generates ({child.stdout.strip()} tokens in {seconds:.1f} s)"


def main() -> int:
    if sys.argv[1:] == ["--child"]:
        return _child()
    ok, line = check()
    print(f"setup: {line}", file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
