"""Post-run inspection: a timeline slider that replays the run to any event, its health in
numbers, and export to JSON and Markdown."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from ..engine.health import health_line
from ..report import json_report, markdown_report
from .plain import plain_label


def health_text(h: dict, tokens_by_purpose: dict, figures: dict | None = None) -> str:
    """The run's health in numbers: `h` from report.health (a record) or Journal.health (a closed run);
    `figures`, the strategy's own (engine.health), lead for the strategies that have their own."""
    by_purpose = ", ".join(f"{p} {n:,}" for p, n in sorted(tokens_by_purpose.items(), key=lambda kv: -kv[1]))
    own = health_line(figures) if figures and figures.get("strategy") not in (None, "goal-stack") else ""
    return (f"{own}  ·  " if own else "") + (f"leaves done:failed {h['leaves_done']}:{h['leaves_failed']}  ·  deepest depth "
            f"{h['max_depth_reached']}{' (limit hit)' if h['depth_limit_hit'] else ''}  ·  decompositions fell "
            f"through {h['fell_through']}  ·  retries {h['retries']}  ·  tokens by purpose: {by_purpose or '-'}")


class InspectBar(QWidget):
    """Shown for a journaled run: `moment_chosen(n)` asks the window to show the run after event n."""

    moment_chosen = Signal(int)
    exported = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.last_seq = 0
        self.load_run = None  # () -> RunRecord of the whole run, for export
        self.run_id = ""
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setMinimum(1)
        self.position = QLabel()
        self.health = plain_label()
        self.health.setWordWrap(True)
        self.export_json = QPushButton("Export JSON…")
        self.export_md = QPushButton("Export Markdown…")
        row = QHBoxLayout()
        row.addWidget(QLabel("Timeline"))
        row.addWidget(self.slider, 1)
        row.addWidget(self.position)
        row.addWidget(self.export_json)
        row.addWidget(self.export_md)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.health)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(80)  # replay once the hand stops, not on every pixel
        self._debounce.timeout.connect(lambda: self.moment_chosen.emit(self.slider.value()))
        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.export_json.clicked.connect(lambda: self._ask_path("json"))
        self.export_md.clicked.connect(lambda: self._ask_path("md"))
        self.file_dialog: QFileDialog | None = None
        self.export_task: asyncio.Future | None = None

    def show_run(self, run_id: str, last_seq: int, load_run) -> None:
        """A journaled run of `last_seq` events; `load_run()` rebuilds all of it (for export)."""
        self.run_id, self.last_seq, self.load_run = run_id, last_seq, load_run
        self.slider.blockSignals(True)
        self.slider.setMaximum(max(1, last_seq))
        self.slider.setValue(max(1, last_seq))
        self.slider.blockSignals(False)

    def show_moment(self, n: int, seconds: float | None, health: str, event: tuple | None = None) -> None:
        """`event`: (kind, goal id) of event n (Journal.event_at), named after its number."""
        at = f"  {seconds:.1f} s" if seconds is not None else ""
        what = ""
        if event is not None:
            what = f": {event[0].replace('_', ' ')}" + (f" {event[1]}" if event[1] else "")
        self.position.setText(f"event {n} of {self.last_seq}{what}{at}")
        self.health.setText(health)

    def _on_slider_value_changed(self, _value: int) -> None:
        self._debounce.start()

    def _ask_path(self, fmt: str) -> None:
        if self.load_run is None:
            return
        dialog = QFileDialog(self, "Export run", f"goalgui-{self.run_id}.{fmt}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(lambda path: self._export_in_background(Path(path), fmt))
        self.file_dialog = dialog
        dialog.open()

    def _export_in_background(self, path: Path, fmt: str) -> None:
        async def go():
            try:
                await asyncio.to_thread(self.export, path, fmt)
            except OSError as exc:
                self.exported.emit(f"could not export: {exc}")
            else:
                self.exported.emit(f"exported to {path}")

        self.export_task = asyncio.ensure_future(go())

    def export(self, path: Path, fmt: str) -> Path:
        """Write the whole run (not the moment on the slider) as the CLI's export would."""
        full = self.load_run()
        text = (markdown_report(full) if fmt == "md"
                else json.dumps(json_report(full), indent=2, ensure_ascii=False) + "\n")
        path.write_text(text, encoding="utf-8")
        return path
