"""`http_get`: fetch a page over HTTP(S), with a size and a time limit."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx

from ..bounded import ACCEPT, BodyError, read_bounded
from ..engine.permissions import Action
from ..engine.tools import BaseTool, ToolEnv, ToolError, ToolSpec

MAX_BYTES = 1_000_000  # of the body, counted after decompression
TIMEOUT = 20.0  # seconds for the whole request


class HttpGet(BaseTool):
    spec = ToolSpec("http_get", "Fetch a web page or file by URL (http or https) and return its text.",
                    {"type": "object", "properties": {"url": {"type": "string", "maxLength": 4000}},
                     "required": ["url"], "additionalProperties": False}, Action.NETWORK, result_cap=20_000)

    def preview(self, arguments: dict) -> str:
        return f"GET {arguments.get('url', '')}"

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        url = arguments["url"].strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ToolError("give an http:// or https:// URL")
        if parts.username or parts.password:
            raise ToolError("a URL with a user name or password is not fetched")
        try:  # the whole request, headers and body, within TIMEOUT (httpx's timeout is per read)
            async with asyncio.timeout(TIMEOUT), httpx.AsyncClient(
                    timeout=httpx.Timeout(TIMEOUT), follow_redirects=True, max_redirects=5) as client:
                async with client.stream("GET", url, headers={"User-Agent": "goalgui http_get",
                                                              "Accept-Encoding": ACCEPT}) as reply:
                    body = await read_bounded(reply, MAX_BYTES)
                    status, kind = reply.status_code, reply.headers.get("content-type", "")
                    encoding = reply.encoding or "utf-8"
        except TimeoutError:
            raise ToolError(f"the request took over {TIMEOUT:g} s and was stopped") from None
        except BodyError as exc:
            if exc.kind == "size":
                raise ToolError(f"the body is over {MAX_BYTES:,} bytes; not read further") from None
            raise ToolError(f"the body cannot be read ({exc.kind}: {exc})") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"the request failed: {type(exc).__name__}: {str(exc)[:200]}") from None
        text = bytes(body).decode(encoding, "replace") if "text" in kind or "json" in kind or "xml" in kind or not kind \
            else f"({len(body):,} bytes of {kind}, not text)"
        return f"HTTP {status} {kind}\n{text}"
