"""The goal stack against the same goal stack written with LangGraph and its SQLite checkpointer.

Both run seed 000's loop on one zero-latency model (split four ways down to --depth, execute and
verify each leaf) with their durable state on disk: goalgui's journal, LangGraph's SqliteSaver
(a checkpoint per super-step, which is how LangGraph makes a graph resumable). Each prints the
goals it settled and its goals per second; time them side by side, in one run, with farm-bench:

    farm-bench -n 5 -- .venv/bin/python benchmarks/peer_goal_stack.py goalgui \\
        --vs '.venv/bin/python benchmarks/peer_goal_stack.py langgraph'

LangGraph is an optional extra: pip install -e '.[bench]'.
"""



import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WIDTH = 4


def answer(purpose: str, depth: int, text: str) -> str:
    """The one model both implementations call: the same reply for the same question."""
    if purpose == "actionable":
        return "YES small enough" if depth >= DEPTH else "NO split it"
    if purpose == "decompose":
        return "[" + ", ".join(f'"{text} / part {i}"' for i in range(WIDTH)) + "]"
    if purpose == "execute":
        return f"the result of {text}"
    if purpose == "verify":
        return "YES it does the goal"
    return "summary"


def run_goalgui(folder: Path) -> int:
    from goalgui.engine import Limits, ModelReply, Run, Usage
    from goalgui.journal import Journal

    class Zero:
        name = "zero"

        async def complete(self, request):
            goal = request.goal
            return ModelReply(answer(request.purpose, goal.depth if goal else 0, goal.text if goal else ""),
                              usage=Usage(10, 5))

    began = time.perf_counter()
    journal = Journal(folder / "journal.sqlite3")
    run = Run.create("Write the report", Zero(), sink=journal, limits=Limits(max_depth=DEPTH, max_goals=100_000))
    asyncio.run(run.drive())
    journal.close()
    took = time.perf_counter() - began
    return sum(1 for g in run.record.goals.values() if g.status.value == "done" and not g.children), took


def run_langgraph(folder: Path) -> int:
    import sqlite3
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    from goalgui.engine.parsing import string_list, yes_no

    class State(TypedDict):
        stack: list  # goal ids, the next on top
        goals: dict  # id -> {"text", "depth", "parent", "status", "result"}
        current: str

    def pick(state: State) -> dict:
        stack = list(state["stack"])
        return {"current": stack.pop(), "stack": stack}

    def judge(state: State) -> str:
        goal = state["goals"][state["current"]]
        if goal["depth"] >= DEPTH:
            return "execute"
        ok, _ = yes_no(answer("actionable", goal["depth"], goal["text"]))
        return "execute" if ok else "decompose"

    def decompose(state: State) -> dict:
        goals, current = dict(state["goals"]), state["current"]
        parent = goals[current]
        subgoals = string_list(answer("decompose", parent["depth"], parent["text"]))
        ids = []
        for text in subgoals:
            goal_id = f"g{len(goals) + 1}"
            goals[goal_id] = {"text": text, "depth": parent["depth"] + 1, "parent": current, "status": "pending",
                              "result": ""}
            ids.append(goal_id)
        goals[current] = {**parent, "status": "split"}
        return {"goals": goals, "stack": list(state["stack"]) + ids[::-1]}

    def execute(state: State) -> dict:
        goals, current = dict(state["goals"]), state["current"]
        goal = goals[current]
        result = answer("execute", goal["depth"], goal["text"])
        ok, _ = yes_no(answer("verify", goal["depth"], goal["text"]))
        goals[current] = {**goal, "status": "done" if ok else "failed", "result": result}
        return {"goals": goals}

    def more(state: State) -> str:
        return "pick" if state["stack"] else END

    graph = StateGraph(State)
    graph.add_node("pick", pick)
    graph.add_node("decompose", decompose)
    graph.add_node("execute", execute)
    graph.add_edge(START, "pick")
    graph.add_conditional_edges("pick", judge, ["execute", "decompose"])
    graph.add_conditional_edges("decompose", more, ["pick", END])
    graph.add_conditional_edges("execute", more, ["pick", END])
    began = time.perf_counter()
    connection = sqlite3.connect(folder / "checkpoints.sqlite3", check_same_thread=False)
    app = graph.compile(checkpointer=SqliteSaver(connection))
    root = {"g1": {"text": "Write the report", "depth": 0, "parent": None, "status": "pending", "result": ""}}
    final = app.invoke({"stack": ["g1"], "goals": root, "current": ""},
                       {"configurable": {"thread_id": "run-1"}, "recursion_limit": 1_000_000})
    connection.close()
    took = time.perf_counter() - began
    return sum(1 for g in final["goals"].values() if g["status"] == "done"), took


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("impl", choices=["goalgui", "langgraph"])
    parser.add_argument("--depth", type=int, default=5, help="leaves at this depth (5: 1,365 goals)")
    args = parser.parse_args()
    DEPTH = args.depth
    with tempfile.TemporaryDirectory() as tmp:
        done, took = (run_goalgui if args.impl == "goalgui" else run_langgraph)(Path(tmp))
    goals = sum(WIDTH ** d for d in range(DEPTH + 1))
    print(f"{args.impl}: {goals} goals, {done} leaves done, {took:.2f} s from the first write to the last, "
          f"{goals / took:,.0f} goals/s")
