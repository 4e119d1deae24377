"""`run_shell`: one command in a bubblewrap sandbox whose only writable path is the workspace.

The sandbox has its own mount, PID, IPC, UTS and network namespaces (the network only when the
call asked for it and the permission mode and the operator allowed it), the system read-only,
a private /tmp, no environment but PATH, HOME and LANG, and dies with goalgui. Where bubblewrap
cannot run (not installed, or no namespaces here) the command is refused with the reason: it is
never run outside the sandbox.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import signal
import subprocess

from ..engine.permissions import Action
from ..engine.tools import BaseTool, ToolEnv, ToolError, ToolSpec

DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 110  # under the dispatch's own limit for any tool (tool_calls.TOOL_TIMEOUT)
OUTPUT_BYTES = 64_000  # of output kept; the rest is read and dropped
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/alternatives", "/etc/ld.so.cache",
           "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
           "/etc/ssl/certs", "/etc/ca-certificates", "/etc/localtime")  # /etc/ssl/private stays out
# bwrap itself runs with only this: its sandbox's PID 1 is bwrap's own fork, whose environment
# (goalgui's, API keys included) /proc/1/environ would show; --clearenv cleans only the command's
_BWRAP_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
_NETWORK = ("/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf")


# namespaces of their own (the user namespace is bwrap's to decide: it makes one when not root)
# Every capability dropped: started by root, bwrap keeps them in the sandbox otherwise, and one
# `mount -o remount,rw` of a read-only bind writes the host.
_NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL")
# Inside a chroot (some build and CI machines), "/" is not a mount point and bwrap cannot make it a
# slave mount. As root, a mount namespace of its own in which "/" is bound onto a folder and
# entered gives bwrap a real mount point, and the same sandbox. (Where the chroot's file system is
# a shared mount, that one bind is seen outside too; it is made once and then found, never again.)
_ROOT_SHIM = ("unshare", "--mount", "--propagation", "unchanged", "/bin/sh", "-c",
              'mkdir -p "$0" && { mountpoint -q "$0" || mount --rbind / "$0"; } && exec chroot "$0" "$@"',
              "/tmp/.goalgui-sandbox-root")


def _probe(prefix: list[str], bwrap: str) -> str | None:
    argv = [*prefix, bwrap, *_NAMESPACES, "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/",
            "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        probe = subprocess.run(argv, capture_output=True, timeout=20, env=_BWRAP_ENV)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot start: {exc}"
    if probe.returncode == 0:
        return None
    detail = probe.stderr.decode("utf-8", "replace").strip().splitlines()
    return "bubblewrap cannot make a sandbox here" + (f" ({detail[-1][:200]})" if detail else "")


@functools.lru_cache(maxsize=1)
def _sandbox() -> tuple[tuple[str, ...], str | None]:
    """(what runs bwrap, why it cannot) for this machine, found once per process."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return (), "bubblewrap (bwrap) is not installed; install the Debian package bubblewrap"
    problem = _probe([], bwrap)
    if problem is None:
        return (bwrap,), None
    # the mark of a root that is no mount point (a chroot): bwrap's own words for it
    if os.geteuid() == 0 and "make / slave" in problem and shutil.which("unshare") \
            and _probe(list(_ROOT_SHIM), bwrap) is None:
        return (*_ROOT_SHIM, bwrap), None
    return (), problem


def bwrap_command() -> list[str]:
    """What starts bwrap on this machine (bwrap itself, or the shim and bwrap); [] where it cannot."""
    return list(_sandbox()[0])


def sandbox_problem() -> str | None:
    """Why commands cannot be sandboxed here, or None when they can."""
    return _sandbox()[1]


def sandbox_argv(workspace: str, command: str, *, network: bool) -> list[str]:
    """The bwrap command line that runs `command` with `workspace` as its only writable folder."""
    argv = [*_sandbox()[0], *_NAMESPACES, "--die-with-parent", "--new-session"]
    if not network:
        argv.append("--unshare-net")
    for path in _SYSTEM + (_NETWORK if network else ()):
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
             "--bind", workspace, workspace, "--chdir", workspace, "--clearenv",
             "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", workspace,
             "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp",
             "/bin/sh", "-c", command]
    return argv


class RunShell(BaseTool):
    spec = ToolSpec(
        "run_shell",
        "Run a shell command in the workspace, in a sandbox (the workspace is the only writable folder; "
        "no network unless 'network' is true and allowed). Output and exit status come back.",
        {"type": "object", "properties": {
            "command": {"type": "string", "maxLength": 10_000},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
            "network": {"type": "boolean"},
        }, "required": ["command"], "additionalProperties": False},
        Action.SHELL, result_cap=12_000)

    def effect(self, arguments: dict) -> Action:
        return Action.NETWORK if arguments.get("network") else Action.SHELL

    def preview(self, arguments: dict) -> str:
        net = " (with network)" if arguments.get("network") else ""
        return f"$ {arguments.get('command', '')}{net}"

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        command = arguments["command"]
        if not command.strip():
            raise ToolError("the command is empty")
        problem = await asyncio.to_thread(sandbox_problem)
        if problem:
            raise ToolError(f"run_shell is not available: {problem}; the command was not run")
        timeout = int(arguments.get("timeout", DEFAULT_TIMEOUT))
        argv = sandbox_argv(str(env.workspace), command, network=bool(arguments.get("network")) and env.network)
        proc = await asyncio.create_subprocess_exec(*argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                    stderr=subprocess.STDOUT, start_new_session=True,
                                                    env=_BWRAP_ENV, preexec_fn=_limits(timeout))
        kept = bytearray()
        dropped = 0

        async def read() -> None:
            nonlocal dropped
            while chunk := await proc.stdout.read(65536):
                room = OUTPUT_BYTES - len(kept)
                kept.extend(chunk[:max(0, room)])
                dropped += max(0, len(chunk) - max(0, room))
            await proc.wait()

        try:
            await asyncio.wait_for(read(), timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            _kill(proc)
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            return _format(kept, dropped, f"stopped after {timeout} s (timeout)")
        return _format(kept, dropped, f"exit {proc.returncode}")


MEMORY_BYTES = 4 << 30  # address space of the sandboxed command
FILE_BYTES = 1 << 30  # the largest file it may write
EXTRA_PROCESSES = 512  # processes it may start beyond what the user runs already


def _limits(timeout: int):
    """Resource limits for the sandbox, set in the child before bwrap starts: memory, file size,
    CPU time, and (for a user other than root, for whom the kernel does not count) processes, so
    a fork bomb or a memory hog stops inside the sandbox."""
    import resource

    processes = None
    if os.geteuid() != 0:
        uid = str(os.geteuid())
        mine = 0
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    if os.stat(entry.path).st_uid == int(uid):
                        mine += 1
                except OSError:
                    pass
        processes = mine + EXTRA_PROCESSES

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_CPU, (timeout + 5, timeout + 5))
        if processes is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))

    return apply


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _format(kept: bytes, dropped: int, status: str) -> str:
    text = bytes(kept).decode("utf-8", "replace")
    cut = f"\n[output cut: {dropped:,} more bytes]" if dropped else ""
    return f"{status}\n{text}{cut}" if text else f"{status} (no output)"
