"""Reading an HTTP body without trusting it: at most `cap` bytes after decompression, inflated a
bounded step at a time (httpx's own decoder inflates a whole network chunk at once: 64 MB from
one 64 KB chunk of a gzip bomb). Used by the providers and by the http_get tool."""

from __future__ import annotations

import zlib

ENCODINGS = ("identity", "", "gzip", "x-gzip", "deflate")
ACCEPT = "gzip, deflate"  # what to ask for: the encodings this module can bound


class BodyError(ValueError):
    """The body cannot be taken: `kind` is 'encoding', 'corrupt' or 'size'."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(detail or kind)
        self.kind = kind


async def read_bounded(response, cap: int) -> bytes:
    """The body of a streamed httpx response, at most `cap` bytes once decoded (BodyError past it)."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ENCODINGS:
        raise BodyError("encoding", encoding[:40])
    inflate = None if encoding in ("identity", "") else zlib.decompressobj(32 + zlib.MAX_WBITS)
    chunks, size = [], 0
    async for raw in response.aiter_raw():
        data = raw
        while data:
            if inflate is None:
                out, data = data, b""
            else:
                try:
                    out = inflate.decompress(data, cap + 1 - size)
                except zlib.error:
                    raise BodyError("corrupt", encoding) from None
                data = inflate.unconsumed_tail
            size += len(out)
            if size > cap:
                raise BodyError("size")
            chunks.append(out)
    return b"".join(chunks)
