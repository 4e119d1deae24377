"""The file tools: list, read, tail, md5, search, write and edit, all inside the workspace."""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os

from ..engine.permissions import Action
from ..engine.tools import BaseTool, ToolEnv, ToolError, ToolSpec
from .workspace import Workspace

READ_LIMIT = 200_000  # bytes of a file a read looks at
SEARCH_FILE_LIMIT = 2_000_000  # a file bigger than this is not searched
SEARCH_TOTAL_LIMIT = 200_000_000  # bytes one search reads at most, over all files
MD5_LIMIT = 2 << 30  # bytes one checksum reads at most (a sparse 1 TB file would take minutes)
_PATH = {"type": "string", "description": "a path relative to the workspace", "maxLength": 1000}


def _space(env: ToolEnv) -> Workspace:
    return Workspace(env.workspace)


class ListFiles(BaseTool):
    spec = ToolSpec("list_files", "List the files and folders in the workspace (or a folder of it), with sizes.",
                    {"type": "object", "properties": {"path": _PATH}, "additionalProperties": False}, Action.READ)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        entries = await asyncio.to_thread(_space(env).walk, arguments.get("path", "."), max_entries=500)
        if not entries:
            return "(the folder is empty)"
        lines = [f"{name}" if is_dir else f"{name}  ({size:,} bytes)" for name, is_dir, size in entries]
        more = "\n[more entries not listed]" if len(entries) >= 500 else ""
        return "\n".join(lines) + more


class ReadFile(BaseTool):
    spec = ToolSpec("read_file", "Read a text file of the workspace.",
                    {"type": "object", "properties": {"path": _PATH}, "required": ["path"],
                     "additionalProperties": False}, Action.READ, result_cap=20_000)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        text, size = await asyncio.to_thread(_space(env).read_text, arguments["path"], READ_LIMIT)
        if not text:
            return "(the file is empty)"
        return text + (f"\n[the file has {size:,} bytes; the first {READ_LIMIT:,} are shown]" if size > READ_LIMIT
                       else "")


class TailFile(BaseTool):
    spec = ToolSpec("tail_file", "The last lines of a text file of the workspace (20 by default).",
                    {"type": "object", "properties": {"path": _PATH, "lines": {"type": "integer", "minimum": 1,
                                                                                "maximum": 1000}},
                     "required": ["path"], "additionalProperties": False}, Action.READ)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        count = int(arguments.get("lines", 20))

        def tail() -> str:
            space = _space(env)
            fd = space.open(arguments["path"])
            try:
                size = os.fstat(fd).st_size
                start = max(0, size - READ_LIMIT)
                os.lseek(fd, start, os.SEEK_SET)
                data = os.read(fd, READ_LIMIT)
            finally:
                os.close(fd)
            lines = data.decode("utf-8", "replace").splitlines()
            if start:
                lines = lines[1:]  # the first one is cut
            return "\n".join(lines[-count:]) if lines else "(the file is empty)"

        return await asyncio.to_thread(tail)


class Md5File(BaseTool):
    spec = ToolSpec("md5_file", "The MD5 checksum and size of a file of the workspace.",
                    {"type": "object", "properties": {"path": _PATH}, "required": ["path"],
                     "additionalProperties": False}, Action.READ)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        def digest() -> str:
            fd = _space(env).open(arguments["path"])
            h, size = hashlib.md5(), 0
            try:
                if os.fstat(fd).st_size > MD5_LIMIT:  # a thread cannot be stopped: it is never given a day's work
                    raise ToolError(f"{arguments['path']!r} is over {MD5_LIMIT >> 20:,} MB; not hashed")
                while chunk := os.read(fd, 1 << 20):
                    h.update(chunk)
                    size += len(chunk)
                    if size > MD5_LIMIT:
                        raise ToolError(f"{arguments['path']!r} grew past {MD5_LIMIT >> 20:,} MB while hashed")
            finally:
                os.close(fd)
            return f"{h.hexdigest()}  {arguments['path']}  ({size:,} bytes)"

        return await asyncio.to_thread(digest)


class SearchFiles(BaseTool):
    spec = ToolSpec("search_files", "Find the lines of the workspace's text files that contain a text (any case).",
                    {"type": "object", "properties": {"text": {"type": "string", "maxLength": 500}, "path": _PATH},
                     "required": ["text"], "additionalProperties": False}, Action.READ)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        needle = arguments["text"].lower()
        if not needle.strip():
            raise ToolError("give a text to search for")

        def search() -> str:
            space, hits, read = _space(env), [], 0
            for rel, is_dir, size in space.walk(arguments.get("path", "."), max_entries=5000):
                if is_dir or size > SEARCH_FILE_LIMIT or rel.endswith("(link, not followed)"):
                    continue
                read += size
                if read > SEARCH_TOTAL_LIMIT:
                    hits.append(f"[stopped after {SEARCH_TOTAL_LIMIT >> 20:,} MB of files]")
                    break
                try:
                    text, _ = space.read_text(rel, SEARCH_FILE_LIMIT)
                except ToolError:
                    continue  # binary, or gone meanwhile
                for number, line in enumerate(text.splitlines(), 1):
                    if needle in line.lower():
                        hits.append(f"{rel}:{number}: {line.strip()[:200]}")
                        if len(hits) >= 200:
                            return "\n".join(hits) + "\n[more matches not shown]"
            return "\n".join(hits) if hits else f"no line contains {arguments['text']!r}"

        return await asyncio.to_thread(search)


class WriteFile(BaseTool):
    spec = ToolSpec("write_file", "Write a text file in the workspace (created, or replaced), with its folders.",
                    {"type": "object", "properties": {"path": _PATH, "content": {"type": "string"}},
                     "required": ["path", "content"], "additionalProperties": False}, Action.WRITE)

    def preview(self, arguments: dict) -> str:
        content = str(arguments.get("content", ""))
        shown = content if len(content) <= 2000 else content[:2000] + f"\n… ({len(content) - 2000:,} more characters)"
        return f"write {arguments.get('path')} ({len(content.encode()):,} bytes):\n{shown}"

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        written = await asyncio.to_thread(_space(env).write_text, arguments["path"], arguments["content"])
        return f"wrote {written:,} bytes to {arguments['path']}"


class EditFile(BaseTool):
    spec = ToolSpec("edit_file", "Replace one exact, unique piece of text in a file of the workspace.",
                    {"type": "object", "properties": {"path": _PATH, "old": {"type": "string"},
                                                      "new": {"type": "string"}},
                     "required": ["path", "old", "new"], "additionalProperties": False}, Action.WRITE)

    def preview(self, arguments: dict) -> str:
        old, new = str(arguments.get("old", "")), str(arguments.get("new", ""))
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="")
        return f"edit {arguments.get('path')}:\n" + "\n".join(list(diff)[:200])

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        old, new, path = arguments["old"], arguments["new"], arguments["path"]
        if not old:
            raise ToolError("'old' is empty: give the exact text to replace")

        def edit() -> str:
            space = _space(env)
            data, size = space.read_bytes(path, READ_LIMIT + 1)
            try:  # never write back what a lenient decoding replaced
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise ToolError(f"{path!r} is not UTF-8 text; write it whole instead") from None
            if size > READ_LIMIT:
                raise ToolError(f"{path!r} is larger than {READ_LIMIT:,} bytes; write it whole instead")
            count = text.count(old)
            if count == 0:
                raise ToolError(f"the text to replace is not in {path!r}; read the file and copy it exactly")
            if count > 1:
                raise ToolError(f"the text to replace occurs {count} times in {path!r}; include more of the "
                                "surrounding text so it is unique")
            space.write_text(path, text.replace(old, new, 1))
            return f"edited {path}: 1 replacement"

        return await asyncio.to_thread(edit)


FILE_TOOLS = (ListFiles, ReadFile, TailFile, Md5File, SearchFiles, WriteFile, EditFile)
