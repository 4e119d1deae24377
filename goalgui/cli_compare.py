"""`goalgui diff RUN_A RUN_B` (two journaled runs compared, goalgui/compare.py), `goalgui fork RUN`
(a new run from another's history, goalgui/forking.py) and `goalgui steer RUN GOAL ACTION` (the
operator overrules the model on a goal, goalgui/engine/overrule.py)."""

from __future__ import annotations

import json
import sys

from . import paths
from .compare import Tree, comparison, markdown


def compare_runs(journal, run_a: str, run_b: str) -> tuple[dict, str]:
    """Both runs read from the journal and compared: (the data, its Markdown)."""
    a, b = journal.resolve(run_a), journal.resolve(run_b)
    data = comparison(Tree(**journal.tree(a)), Tree(**journal.tree(b)))  # the projection: no replay
    return data, markdown(data)


def cmd_diff(args) -> int:
    from .journal import Journal

    journal = Journal(paths.journal_path(args.journal))
    try:
        data, text = compare_runs(journal, args.run_a, args.run_b)
    finally:
        journal.close()
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")  # ASCII: a control in a goal never reaches a terminal
    else:  # every text from a run in it went through terminal.shown
        sys.stdout.write(text + "\n")
    return 0


def cmd_fork(args) -> int:
    """Write the fork, then resume it here with the model, budgets and mode given."""
    from .cli import cmd_resume
    from .forking import fork_run
    from .journal import Journal

    if args.model:  # a model that cannot load is refused before anything is written
        from .providers import load_model

        load_model(args.model)
    journal = Journal(paths.journal_path(args.journal))
    try:
        source = journal.resolve(args.run)
        fork_id = fork_run(journal, source, goal_id=args.at, event=args.at_event, model=args.model)
    finally:
        journal.close()
    print(f"forked {source} into {fork_id}", file=sys.stderr)
    return cmd_resume(args, fork_id)


def cmd_steer(args) -> int:
    from .journal import Journal
    from .runs import steer_run
    from .terminal import shown

    journal = Journal(paths.journal_path(args.journal))
    try:
        said = steer_run(journal, journal.resolve(args.run), args.goal, args.action, note=args.note, text=args.text,
                         subgoals=args.subgoal)
    finally:
        journal.close()
    print(shown(said))
    return 0
