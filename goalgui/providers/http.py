"""What the HTTP providers share: one httpx.AsyncClient per profile, retries and error mapping.

- 429 becomes RateLimited at once, carrying retry-after-ms or Retry-After (seconds or an HTTP date).
- 408, 409, 5xx, connection errors, timeouts and broken bodies are retried: at most 3 tries in
  all, backing off min(0.5 * 2**n, 8) s less up to 25% jitter, never past the request's deadline
  (the run's wall-clock budget); then ProviderUnavailable.
- 401 and 403 become AuthenticationFailed naming the profile (never the key).
- A 2xx whose body is not what the provider's format promises becomes BadResponse.
"""

from __future__ import annotations

import abc
import asyncio
import email.utils
import json
import logging
import random
import time
from typing import Any, Callable

import httpx

from ..bounded import BodyError, read_bounded
from ..engine.model import (
    AuthenticationFailed,
    BadResponse,
    ModelReply,
    ModelRequest,
    ProviderUnavailable,
    RateLimited,
)
from ..settings import Profile

log = logging.getLogger(__name__)

MAX_TRIES = 3


def retry_after(response: httpx.Response) -> float | None:
    """Seconds to wait, from retry-after-ms or Retry-After (seconds or an HTTP date)."""
    ms = response.headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff(attempt: int, rng: Callable[[], float] = random.random) -> float:
    """The delay before try number attempt+2: min(0.5 * 2**attempt, 8) s less up to 25%."""
    return min(0.5 * 2**attempt, 8.0) * (1 - 0.25 * rng())


class _Transient(Exception):
    """An error worth another try."""


class HttpModel(abc.ABC):
    """Base of the HTTP providers: subclasses build the body and read the reply."""

    kind = "http"
    path = "/"

    def __init__(self, profile: Profile, key: str | None, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep=asyncio.sleep, rng: Callable[[], float] = random.random):
        self.profile = profile
        self.name = f"{self.kind}:{profile.name}"
        self.prompt_profile = profile.prompt_profile  # which prompts the engine sends (engine.prompts.for_model)
        self._key = key
        self._sleep = sleep
        self._rng = rng
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self.attempts = 0  # tries the last request took (for tests and logs)

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}({self.profile.name!r}, {self.profile.base_url!r})"

    def headers(self) -> dict[str, str]:
        return {}

    def embedder(self) -> ProviderEmbedder | None:
        """The findings memory's embedder from this provider's endpoint, where the profile names
        an embeddings model and the provider has an endpoint; else None (the default is used)."""
        if self.profile.embeddings_model and self.embeddings_path:
            return ProviderEmbedder(self)
        return None

    embeddings_path: str | None = None

    def embeddings_body(self, texts: list[str]) -> dict:
        return {"model": self.profile.embeddings_model, "input": texts}

    def embeddings_parse(self, data: Any) -> list[list[float]]:
        raise BadResponse(f"{self.name}: no embeddings endpoint")

    async def embed_texts(self, texts: list[str]):
        data = await self.post(self.embeddings_path, self.embeddings_body(list(texts)), None)
        try:
            vectors = self.embeddings_parse(data)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise BadResponse(f"{self.name}: unexpected embeddings reply ({type(exc).__name__}: {exc})") from None
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) != 1:
            raise BadResponse(f"{self.name}: {len(vectors)} embeddings for {len(texts)} texts")
        return vectors

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            self._client = httpx.AsyncClient(
                base_url=self.profile.base_url,
                headers={**self.headers(), "accept-encoding": "gzip, deflate"},
                timeout=httpx.Timeout(self.profile.read_timeout, connect=self.profile.connect_timeout),
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    # -- the protocol ----------------------------------------------------------

    async def complete(self, request: ModelRequest) -> ModelReply:
        body = self.body(request)
        data = await self.post(self.path, body, request.deadline)
        try:
            return self.parse(data, request)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
            raise BadResponse(f"{self.name}: unexpected reply shape ({type(exc).__name__}: {exc})") from None

    @abc.abstractmethod
    def body(self, request: ModelRequest) -> dict:
        """The provider's request body for `request`."""

    @abc.abstractmethod
    def parse(self, data: Any, request: ModelRequest) -> ModelReply:
        """The reply from the provider's decoded body."""

    def decode(self, response: httpx.Response) -> Any:
        """The JSON body; providers with other framings override this."""
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadResponse(f"{self.name}: the reply is not JSON ({response.text[:80]!r})") from None
        except RecursionError:
            raise BadResponse(f"{self.name}: the reply is JSON nested too deeply to read") from None

    def rejected_format(self, response: httpx.Response, body: dict) -> dict | None:
        """A body to try once more when the server refused how structured output was asked for."""
        return None

    async def post(self, path: str, body: dict, deadline: float | None) -> Any:
        last = ""
        reformatted = 0  # a refused way of asking (a schema, a forced tool call), asked another way
        attempt = 0
        self.attempts = 0
        while attempt < MAX_TRIES:
            self.attempts += 1
            timeout = None
            if deadline is not None:
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    raise ProviderUnavailable(f"{self.name}: no time left in the run's budget ({last or 'no reply'})")
            whole = self.profile.request_timeout if timeout is None else min(timeout, self.profile.request_timeout)
            try:
                try:
                    async with asyncio.timeout(whole):
                        response = await self._exchange(path, body, timeout)
                except TimeoutError:
                    raise _Transient(f"no whole reply within {whole:g} s") from None
                status = response.status_code
                if 200 <= status < 300:
                    return self.decode_checked(response)
                if reformatted < 2:
                    retry_body = self.rejected_format(response, body)
                    if retry_body is not None:
                        body, reformatted = retry_body, reformatted + 1
                        continue  # a different request, not a retry of the same one
                if status == 429:
                    wait = retry_after(response)
                    raise RateLimited(f"{self.name}: {self._message(response)}", retry_after=wait)
                if status in (401, 403):
                    raise AuthenticationFailed(
                        f"profile {self.profile.name!r}: {self.profile.base_url} refused the credentials "
                        f"(HTTP {status}); check the key with 'goalgui profiles test {self.profile.name}'")
                if status in (408, 409) or status >= 500:
                    raise _Transient(f"HTTP {status}: {self._message(response)}")
                raise BadResponse(f"{self.name}: HTTP {status}: {self._message(response)}")
            except _Transient as exc:
                last = str(exc)
            except httpx.TimeoutException as exc:
                last = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            attempt += 1
            if attempt >= MAX_TRIES:
                break
            delay = backoff(attempt - 1, self._rng)
            if deadline is not None and time.monotonic() + delay >= deadline:
                break
            # the reason's kind only: a server's message may quote the request (the prompt, a key)
            log.info("%s: %s; try %d of %d in %.2f s", self.name, last.split(":", 1)[0][:40], attempt + 1,
                     MAX_TRIES, delay)
            await self._sleep(delay)
        raise ProviderUnavailable(f"{self.name}: {last} (after {self.attempts} tries)")

    async def _exchange(self, path: str, body: dict, timeout: float | None) -> httpx.Response:
        """POST and read the body as it streams in, at most the profile's reply size after
        decompression (a 1 MB gzip body may inflate to 1 GB): the response, its body read."""
        cap = int(self.profile.max_reply_mb * 1_000_000)
        kwargs = {"timeout": timeout} if timeout else {}
        async with self.client.stream("POST", path, json=body, **kwargs) as response:
            try:
                content = await read_bounded(response, cap)
            except BodyError as exc:
                if exc.kind == "encoding":
                    raise BadResponse(f"{self.name}: the reply is encoded as {str(exc)!r}, which was not asked "
                                      "for") from None
                if exc.kind == "corrupt":
                    raise BadResponse(f"{self.name}: the reply's {exc} body is corrupt") from None
                raise BadResponse(f"{self.name}: the reply is over {self.profile.max_reply_mb:g} MB "
                                  "(the profile's max reply size)") from None
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(response.status_code, headers=headers, content=content,
                              request=response.request)

    def decode_checked(self, response: httpx.Response) -> Any:
        try:
            return self.decode(response)
        except httpx.HTTPError as exc:  # the body broke off while being read
            raise _Transient(f"the reply broke off: {type(exc).__name__}") from None

    @staticmethod
    def _message(response: httpx.Response) -> str:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return response.text[:200].strip() or response.reason_phrase
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict):
                return str(err.get("message") or err)[:200]
            if err:
                return str(err)[:200]
        return json.dumps(data)[:200]


class ProviderEmbedder:
    """Embeddings from a provider's endpoint, awaited by the findings memory."""

    def __init__(self, model: HttpModel):
        self.model = model
        self.dimension: int | None = None

    async def aembed(self, texts):
        vectors = await self.model.embed_texts(list(texts))
        self.dimension = len(vectors[0])
        return vectors
