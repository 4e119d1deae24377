"""What other processes ask of the runs this process drives, carried out here (issue 14: attach).

A window attached to a run that another process drives (`goalgui run` in a terminal, another
window) steers it through the journal: it leaves control requests (pause, resume, cancel, skip,
budgets, mode, an overrule, a message, a confirmation's answer), which the driver takes a few
times a second and carries out, and it says every second that it is watching. `Remote` is the
driver's side of that:

- `poll` takes the requests for the runs this process drives and carries them out;
- `confirmer(local)` asks as before (a dialog, the terminal, nobody) and at the same time waits for
  an attached window's answer; the first answer wins and the other question is withdrawn. A
  driver with nobody to ask here (no terminal, no `--yes`) waits while a window watches the run
  and pauses as before once none does, so a run nobody watches never hangs;
- `hold` keeps a paused or blocked run while a window watches it, so the window can resume it
  in the process that drives it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, Iterable

from .engine.confirm import ConfirmationAnswer, ConfirmationRequest, ConfirmerFn, NeedsConfirmation, Outcome
from .engine.lifecycle import InputError, RunState
from .engine.permissions import validate_permission_mode
from .engine.run import Run

log = logging.getLogger(__name__)

CONTROL_POLL = 0.25  # seconds between looks at control requests from other processes
MAX_TEXT = 4000  # characters of a text field an answer may carry (a sub-goal, a reason)
WATCH_CHECK = 1.0  # seconds between looks at whether a window still watches, while it is waited for


class Remote:
    def __init__(self, journal, *, restart: Callable[[Run], object] | None = None):
        self.journal = journal
        # a run a resume request made active again: the window starts it; `hold` drives it again
        self.restart = restart
        self._open: dict[str, tuple[asyncio.Future, ConfirmationRequest]] = {}  # confirmation id -> answer, question

    # -- confirmations ------------------------------------------------------------------

    def confirmer(self, local: ConfirmerFn) -> ConfirmerFn:
        """`local`, raced against the answers attached windows send for the same question."""

        async def ask(request: ConfirmationRequest) -> ConfirmationAnswer:
            return await self._ask(local, request)

        return ask

    async def _ask(self, local: ConfirmerFn, request: ConfirmationRequest) -> ConfirmationAnswer:
        answered: asyncio.Future = asyncio.get_running_loop().create_future()
        self._open[request.id] = (answered, request)

        async def here() -> ConfirmationAnswer:
            return await local(request)

        asking = asyncio.ensure_future(here())
        try:
            await asyncio.wait({asking, answered}, return_when=asyncio.FIRST_COMPLETED)
            if answered.done():
                return answered.result()
            try:
                return asking.result()
            except NeedsConfirmation as nobody_here:
                return await self._from_windows(request, answered, nobody_here)
        finally:
            self._open.pop(request.id, None)
            if not asking.done():  # answered from a window: the dialog or the prompt here is withdrawn
                asking.cancel()
                # waited for, not awaited: a pause or cancel of this step meanwhile must reach this
                # task (awaiting `asking` would hand it to `asking`, already cancelled, and lose it)
                await asyncio.wait({asking})
            if not asking.cancelled():
                asking.exception()  # seen: what the withdrawn question raised is not logged as lost

    async def _from_windows(self, request: ConfirmationRequest, answered: asyncio.Future,
                            nobody_here: NeedsConfirmation) -> ConfirmationAnswer:
        """Nobody can answer in this process: wait for an attached window's answer while one watches."""
        if not request.run_id or not await asyncio.to_thread(self.journal.watchers, request.run_id):
            raise nobody_here
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(answered), WATCH_CHECK)
            except asyncio.TimeoutError:
                pass
            if not await asyncio.to_thread(self.journal.watchers, request.run_id):
                raise NeedsConfirmation(f"{nobody_here} (the window that was watching went away)")

    def answer(self, args: dict, run: Run | None = None) -> None:
        """An attached window's answer to an open question of `run`; refused in one line if it is not
        open any more (another answer came first), is another run's, or is not an answer a dialog
        gives (approved or declined, with the edits its kind of question allows)."""
        entry = self._open.get(str(args.get("confirmation_id")))
        if entry is None or entry[0].done() or (run is not None and entry[1].run_id != run.run_id):
            raise InputError(f"confirmation {args.get('confirmation_id')!r} is no longer open: answered already")
        if args.get("outcome") not in (Outcome.APPROVED.value, Outcome.DECLINED.value):
            raise InputError(f"{args.get('outcome')!r} is not an answer: approved or declined")
        outcome = Outcome(args["outcome"])
        mode = args.get("mode")
        if mode is not None:
            mode = validate_permission_mode(str(mode))
        edits = _edits(entry[1].kind, outcome, args.get("edits") or {})
        entry[0].set_result(ConfirmationAnswer(outcome, mode, edits))

    def draft(self, args: dict) -> None:
        """What is typed so far in an attached window's dialog: journaled as the driver's own drafts are."""
        entry = self._open.get(str(args.get("confirmation_id")))
        draft = args.get("draft")
        if entry is not None and entry[1].save_draft is not None and isinstance(draft, dict) and not entry[0].done():
            entry[1].save_draft(draft)

    # -- the requests -------------------------------------------------------------------

    def carry_out(self, run: Run, action: str, args: dict) -> None:
        """One request; a refused one raises (InputError, or the engine's own)."""
        if action == "pause" and run.state is RunState.ACTIVE:
            run.pause(args.get("reason", "paused from another process"))
        elif action == "cancel" and run.state is not RunState.CANCELLED:
            run.cancel(args.get("reason", "cancelled from another process"))
        elif action == "resume" and run.state.resumable:
            blocking = run.record.still_blocking()
            if blocking is not None:
                raise InputError(f"{blocking[1]}: raise it to resume")
            run.resume()
            if self.restart is not None:
                self.restart(run)
        elif action == "tell":
            run.tell(str(args.get("text", "")))
        elif action == "skip":
            run.skip(args.get("goal_id"))
        elif action == "limits":
            run.set_limits(**args)
        elif action == "mode":
            run.set_permission_mode(args["mode"])
        elif action == "steer":
            run.overrule(args["goal_id"], args["overrule"], note=args.get("note", ""),
                         text=args.get("text", ""), subgoals=args.get("subgoals", ()))
        elif action == "answer":
            self.answer(args, run)
        elif action == "draft":
            self.draft(args)

    async def poll(self, runs: Callable[[], Iterable[Run]]) -> None:
        """Carry out, a few times a second, what other processes ask of `runs()` (those driven here)."""
        while True:
            await asyncio.sleep(CONTROL_POLL)
            for run in list(runs()):
                if run.state.final:
                    continue
                try:
                    requests = await asyncio.to_thread(self.journal.take_controls, run.run_id)
                except Exception:  # a closed or damaged journal: the run's own writes say so
                    log.info("reading the control requests of run %s failed", run.run_id, exc_info=True)
                    continue
                for action, args in requests:
                    try:
                        self.carry_out(run, action, args)
                    except Exception as exc:
                        log.warning("control %s on run %s refused: %s", action, run.run_id, exc)

    async def hold(self, run: Run, stop: Callable[[], bool], holding: Callable[[], object] = lambda: None) -> bool:
        """Keep `run`, paused or blocked, while a window watches it (`holding()` is told once it is
        held); True once a request resumed it (drive it again), False when no window watches any
        more or `stop()` (Ctrl+C) says so."""
        told = False
        while run.state.resumable and not stop():
            if not await asyncio.to_thread(self.journal.watchers, run.run_id):
                return False
            if not told:
                told = True
                holding()
            await asyncio.sleep(CONTROL_POLL)
        return run.state is RunState.ACTIVE


def _edits(kind: str, outcome: Outcome, edits) -> dict:
    """The edits of an answer, as the dialog for `kind` makes them: an approval's fields, or a
    declined tool's reason (what the model is told); anything else is refused."""
    if outcome is Outcome.DECLINED:
        reason = edits.get("reason") if isinstance(edits, dict) else None
        return {"reason": reason.strip()[:MAX_TEXT]} if kind == "tool" and isinstance(reason, str) \
            and reason.strip() else {}
    if not isinstance(edits, dict):
        raise InputError("the answer's edits are not a set of fields")
    allowed = {"tool": {"always"}, "subgoals": {"subgoals"}, "plan": {"subgoals"},
               "create_goal": {"objective", "criteria", "limits"}}.get(kind, set())
    unknown = sorted(set(edits) - allowed)
    if unknown:
        raise InputError(f"a {kind} question has no field {unknown[0]!r} to edit")
    out = dict(edits)
    if "always" in out and not isinstance(out["always"], bool):
        raise InputError("'always' must be true or false")
    if "subgoals" in out:
        texts = out["subgoals"]
        if not isinstance(texts, list) or not all(isinstance(t, str) and len(t) <= MAX_TEXT for t in texts):
            raise InputError("the edited sub-goals must be a list of texts")
    for name in ("objective", "criteria"):
        if name in out and not (isinstance(out[name], str) and len(out[name]) <= MAX_TEXT):
            raise InputError(f"the edited {name} must be a text")
    if "limits" in out and not isinstance(out["limits"], dict):
        raise InputError("the edited limits must be a set of budgets")
    return out
