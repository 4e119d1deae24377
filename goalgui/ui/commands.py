"""The command bar: a chat turn with the agent, and the `/goal` commands (seed 001 and seed 002),
acting through the window's controls."""

from __future__ import annotations

import asyncio

from ..engine.lifecycle import InputError, Limits
from ..engine.prompts_cursor import plan_lines


def goal_command(window, rest: str) -> None:
    """`/goal` shows the goal (and the cursor's plan); `new TEXT` starts one; `pause`, `resume`,
    `cancel` and `skip` press the control (for the cursor, `skip` moves it past the active task);
    `clear` drops the goal: the run is cancelled; `fork` goes on in a new conversation that starts
    with this one but not with its goal (`fork continue`: with it)."""
    word, _, arg = rest.partition(" ")
    run = window.run
    bar = window.statusBar()
    if word == "fork":
        fork_conversation(window, arg.strip())
        return
    if not word:
        bar.showMessage(window.modeline.text(), 10000)
        if run is not None and run.record.strategy == "cursor":
            window.chat_log.appendPlainText(_plan_text(run.record))
        return
    if word == "new":
        window.start_goal({"objective": arg, "criteria": "", "strategy": window.settings.default_strategy,
                           "model": window.model_for_new(), "limits": Limits(),
                           "mode": window.settings.default_permission_mode})
        return
    if run is None:
        bar.showMessage(f"/goal {word}: no run is being driven here", 8000)
        return
    try:
        if word == "clear":
            if run.state.final:
                raise InputError(f"the run is {run.state.value} already")
            run.cancel("cleared by /goal clear")
            window.chat_log.appendPlainText("goal cleared: the run is cancelled and its reminders are dropped")
            return
        if word == "skip" and run.record.strategy == "cursor":
            active = run.record.active_task()
            if active is None:
                raise InputError("there is no active task to skip")
            run.skip(active[1].id)
            return
    except InputError as exc:
        bar.showMessage(f"/goal {word}: {exc}", 8000)
        return
    buttons = {"pause": window.controls.pause_button, "resume": window.controls.resume_button,
               "cancel": window.controls.cancel_button, "skip": window.controls.skip_button}
    button = buttons.get(word)
    if button is None:
        bar.showMessage(f"unknown command: /goal {rest}", 8000)
    elif button.isEnabled():
        button.click()
    else:
        bar.showMessage(f"/goal {word} is not possible while the run is {run.state.value}", 8000)


def fork_conversation(window, how: str = "") -> None:
    """The chat goes on in a fork of its conversation (seed 001): by default the goal stays with the
    source conversation (its run goes on, in the Runs tab, but is no longer the window's current
    goal) and the model is told not to pursue it; `continue` keeps it as the fork's goal."""
    bar = window.statusBar()
    if how not in ("", "continue"):
        bar.showMessage(f"unknown command: /goal fork {how} (use /goal fork, or /goal fork continue)", 8000)
        return
    if window.session is None:
        bar.showMessage("/goal fork: there is no conversation to fork yet", 8000)
        return
    source = window.session.run if window.session.has_goal else None
    window.session = window.session.fork(continue_goal=how == "continue")
    if source is None:
        window.chat_log.appendPlainText("conversation forked: it goes on from here, with no goal")
    elif how == "continue":
        window.chat_log.appendPlainText(f"conversation forked: it goes on with the goal {source.record.objective!r}")
    else:
        if window.current is source:
            window._current = None
        window.chat_log.appendPlainText(
            f"conversation forked: the goal {source.record.objective!r} stays with the earlier conversation "
            f"(run {source.run_id} goes on; the Runs tab has it), and the agent is told not to pursue it")


def _plan_text(record) -> str:
    tasks = record.tasks()
    if not tasks:
        return "goal: (no plan yet)"
    active = record.active_task()
    lines = plan_lines([(t.text, t.status.value) for t in tasks], active[0] if active else None).split("\n")  # the plan as the model is shown it
    return "\n".join([f"goal: {record.objective}"] + [f"  {line}" for line in lines])


async def chat_turn(window, text: str) -> None:
    """One chat turn: the model may answer, and may propose a goal that the dialog confirms."""
    from ..engine.model import ProviderError
    from ..engine.session import GoalSession
    from ..providers import load_model

    window.chat_log.appendPlainText(f"you: {text}")
    try:
        if window.session is None:
            model, spec = await asyncio.to_thread(load_model, window.model_for_new())
            window.session = GoalSession(model, model_spec=spec, sink=window.journal, confirmer=window.engine_confirmer,
                                         permission_mode=window.settings.default_permission_mode,
                                         strategy=window.settings.default_strategy, on_run=window._on_session_run)
        if window.current is not None:
            window.session.adopt(window.current)  # one current goal: the one the window drives
        reply = await window.session.send(text)
    except (InputError, ProviderError) as exc:
        window.chat_log.appendPlainText(f"(not sent: {exc})")
        return
    if reply.text.strip():
        window.chat_log.appendPlainText(f"agent: {reply.text.strip()}")
    for result in reply.tool_results:
        if "error" in result["result"]:
            window.chat_log.appendPlainText(f"({result['name']}: {result['result']['error']})")
