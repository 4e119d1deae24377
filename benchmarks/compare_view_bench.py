"""The compare view: what `CompareView.show_comparison` costs for a 20,000-goal comparison.

A synthetic comparison (every fifth row differs, depths up to 6) is shown in a shown view, then the
view is painted once (`repaint`, offscreen). Each repeat starts from an empty comparison. The figures
guide, they are not a test: no thresholds.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/compare_view_bench.py [--rows 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def comparison(n: int) -> dict:
    from goalgui.compare import KINDS, MATCHED, ONLY_A, ONLY_B

    def side(i: int) -> dict:
        return {"id": f"g{i + 1}", "status": "done", "tokens": 900 + i, "calls": 3, "seconds": 1.25}

    rows = []
    for i in range(n):
        kind = KINDS[1 + (i // 5) % 4] if i % 5 == 4 else MATCHED
        rows.append({"kind": kind, "depth": min(i, 1 + i % 6), "text": f"Draft section {i} of the annual report",
                     "a": None if kind == ONLY_B else side(i), "b": None if kind == ONLY_A else side(i)})
    first = next(r for r in rows if r["kind"] != MATCHED)
    totals = {"state": "complete", "goals": n, "tokens": 1_234_567, "calls": 3 * n, "seconds": 812.5}
    return {"a": {"run_id": "run-a", **totals}, "b": {"run_id": "run-b", **totals},
            "counts": {k: sum(r["kind"] == k for r in rows) for k in KINDS},
            "first_divergence": {"kind": first["kind"], "text": first["text"], "a": "g5", "b": "g5"}, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from goalgui.ui.compare_view import CompareView

    app = QApplication(sys.argv[:1])
    data = comparison(args.rows)
    empty = {**data, "rows": [], "first_divergence": None}
    view = CompareView()
    view.resize(1000, 600)
    view.show()
    app.processEvents()
    shown_ms, painted_ms, filtered_ms = [], [], []
    for _ in range(args.repeat):
        view.show_comparison(empty)
        view.set_differences_only(False)
        app.processEvents()
        start = time.perf_counter()
        view.show_comparison(data)
        called = time.perf_counter()
        view.repaint()
        painted = time.perf_counter()
        view.set_differences_only(True)
        view.repaint()
        filtered = time.perf_counter()
        assert view.model.rowCount() < args.rows
        shown_ms.append((called - start) * 1000)
        painted_ms.append((painted - start) * 1000)
        filtered_ms.append((filtered - painted) * 1000)
    for name, times in (("show_comparison", shown_ms), ("show_comparison + one paint", painted_ms),
                        ("filter to differences + one paint", filtered_ms)):
        print(f"{args.rows:,} rows, {name:<34}: median {statistics.median(times):7.2f} ms, "
              f"worst {max(times):7.2f} ms (of {args.repeat})")
    view.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
