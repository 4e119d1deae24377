"""A run's workspace: the one folder its tools act in, and the only way they reach files.

A path the model gives is relative to the workspace. It is refused if it is absolute (outside
the workspace), climbs out with `..`, or passes through a symbolic link anywhere on the way.
Paths are opened a component at a time from a descriptor of the workspace with O_NOFOLLOW, so
a link swapped in between a check and the open cannot lead out either: there is no check to
race, only opens that refuse links.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path, PurePosixPath

from ..engine.tools import ToolError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Workspace:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).resolve()

    def parts(self, path: str) -> list[str]:
        """The components of `path` inside the workspace ([] for the workspace itself)."""
        if not isinstance(path, str):
            raise ToolError("a path must be text")
        text = path.strip() or "."
        pure = PurePosixPath(text)
        if pure.is_absolute():
            try:
                pure = pure.relative_to(PurePosixPath(self.root.as_posix()))
            except ValueError:
                raise ToolError(f"{path!r} is outside the workspace; give a path relative to it") from None
        parts = [p for p in pure.parts if p not in ("", ".")]
        if ".." in parts:
            raise ToolError(f"{path!r} leaves the workspace ('..' is not allowed)")
        return parts

    def _walk(self, parts: list[str], *, create: bool = False) -> int:
        """A descriptor of the folder `parts` names (created on the way if `create`); the caller closes it."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise ToolError(f"no folder {'/'.join(parts)!r} in the workspace") from None
                    os.mkdir(part, 0o755, dir_fd=fd)
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _refused(parts, exc) from None
                os.close(fd)
                fd = nxt
            return fd
        except BaseException:
            os.close(fd)
            raise

    def open(self, path: str, flags: int = os.O_RDONLY, *, create_dirs: bool = False) -> int:
        """A descriptor of the file at `path`, opened with `flags` (never through a link)."""
        parts = self.parts(path)
        if not parts:
            raise ToolError("that is the workspace itself; name a file in it")
        folder = self._walk(parts[:-1], create=create_dirs)
        try:  # O_NONBLOCK: a FIFO planted in the workspace must not hang the open
            fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644, dir_fd=folder)
        except FileNotFoundError:
            raise ToolError(f"no file {path!r} in the workspace") from None
        except OSError as exc:
            raise _refused(parts, exc) from None
        finally:
            os.close(folder)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise ToolError(f"{path!r} is not a regular file")
        if info.st_nlink > 1:  # the same file may be outside the workspace under another name
            os.close(fd)
            raise ToolError(f"{path!r} has other hard links (it may be a file outside the workspace); "
                            "not opened")
        os.set_blocking(fd, True)
        return fd

    def read_bytes(self, path: str, limit: int) -> tuple[bytes, int]:
        """Up to `limit` bytes of the file, and its size."""
        fd = self.open(path)
        try:
            size = os.fstat(fd).st_size
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read(limit), size
        finally:
            os.close(fd)

    def read_text(self, path: str, limit: int) -> tuple[str, int]:
        data, size = self.read_bytes(path, limit)
        if b"\x00" in data[:8192]:
            raise ToolError(f"{path!r} is a binary file")
        return data.decode("utf-8", "replace"), size

    def write_text(self, path: str, text: str) -> int:
        """Write `text` as the file at `path`, creating folders inside the workspace; bytes written.
        Written to a new file beside it, then renamed over it: what was at the name (a hard link
        to a file elsewhere included) is replaced, never written through."""
        data = text.encode("utf-8")
        parts = self.parts(path)
        if not parts:
            raise ToolError("that is the workspace itself; name a file in it")
        folder = self._walk(parts[:-1], create=True)
        temp = f".{parts[-1][:100]}.goalgui-{secrets.token_hex(4)}"
        try:
            try:
                old = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                old = None
            if old is not None and stat.S_ISLNK(old.st_mode):
                raise ToolError(f"{path!r} is a symbolic link; links are not followed")
            if old is not None and not stat.S_ISREG(old.st_mode):
                raise ToolError(f"{path!r} is not a regular file")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         stat.S_IMODE(old.st_mode) if old is not None else 0o644, dir_fd=folder)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.rename(temp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise
        except OSError as exc:
            raise _refused(parts, exc) from None
        finally:
            os.close(folder)
        return len(data)

    def walk(self, path: str = ".", *, max_entries: int = 2000):
        """(relative path, is_dir, size) under `path`, depth first, links never followed. A folder is
        opened only when its turn comes (one descriptor per level of depth, not per folder), and
        one that cannot be opened is listed as such."""
        start = self.parts(path)
        out: list[tuple[str, bool, int]] = []
        stack: list[str] = ["/".join(start)]
        while stack and len(out) < max_entries:
            prefix = stack.pop()
            try:
                fd = self._walk(prefix.split("/") if prefix else [])
            except ToolError:
                if prefix != "/".join(start):
                    out.append((f"{prefix}/ (cannot be opened)", True, 0))
                    continue
                raise
            try:
                with os.scandir(fd) as entries:
                    children = []
                    for entry in sorted(entries, key=lambda e: e.name):
                        rel = f"{prefix}/{entry.name}" if prefix else entry.name
                        if entry.is_symlink():
                            out.append((rel + " -> (link, not followed)", False, 0))
                        elif entry.is_dir(follow_symlinks=False):
                            out.append((rel + "/", True, 0))
                            children.append(rel)
                        else:
                            out.append((rel, False, entry.stat(follow_symlinks=False).st_size))
                        if len(out) >= max_entries:
                            break
                    stack.extend(reversed(children))
            finally:
                os.close(fd)
        return out


def _refused(parts: list[str], exc: OSError) -> ToolError:
    where = "/".join(parts)
    if exc.errno in (errno.ELOOP, errno.ENOTDIR) :
        return ToolError(f"{where!r} passes through a symbolic link or a file; links are not followed")
    if exc.errno == errno.EACCES:
        return ToolError(f"{where!r}: permission denied")
    if exc.errno == errno.EISDIR:
        return ToolError(f"{where!r} is a folder")
    return ToolError(f"{where!r}: {exc.strerror or exc}")
