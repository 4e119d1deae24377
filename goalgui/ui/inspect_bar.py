"""Post-run inspection: a timeline slider that replays the run to any event, its health in
numbers, and export to JSON and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from ..engine.record import RunRecord
from ..report import health, json_report, markdown_report


def health_text(record: RunRecord) -> str:
    h = health(record)
    by_purpose = ", ".join(f"{p} {n:,}" for p, n in sorted(record.metrics.tokens_by_purpose.items(),
                                                             key=lambda kv: -kv[1]))
    return (f"leaves done:failed {h['leaves_done']}:{h['leaves_failed']}  ·  deepest depth "
            f"{h['max_depth_reached']}{' (limit hit)' if h['depth_limit_hit'] else ''}  ·  decompositions fell "
            f"through {h['fell_through']}  ·  retries {h['retries']}  ·  tokens by purpose: {by_purpose or '-'}")


class InspectBar(QWidget):
    """Shown for a journaled run: `moment_chosen(n)` asks the window to show the first n events."""

    moment_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.events: list = []
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setMinimum(1)
        self.position = QLabel()
        self.health = QLabel()
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
        self.record: RunRecord | None = None
        self.file_dialog: QFileDialog | None = None

    def show_run(self, events: list, record: RunRecord) -> None:
        self.events = events
        self.record = record
        self.slider.blockSignals(True)
        self.slider.setMaximum(max(1, len(events)))
        self.slider.setValue(max(1, len(events)))
        self.slider.blockSignals(False)
        self.show_moment(record, len(events))

    def show_moment(self, record: RunRecord, n: int) -> None:
        last = self.events[n - 1] if self.events and n else None
        at = f"{last.ts - self.events[0].ts:.1f} s, {last.type}" if last else ""
        self.position.setText(f"event {n} of {len(self.events)}  {at}")
        self.health.setText(health_text(record))

    def _on_slider_value_changed(self, _value: int) -> None:
        self._debounce.start()

    def _ask_path(self, fmt: str) -> None:
        if self.record is None:
            return
        dialog = QFileDialog(self, "Export run", f"goalgui-{self.record.run_id}.{fmt}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(lambda path: self.export(Path(path), fmt))
        self.file_dialog = dialog
        dialog.open()

    def export(self, path: Path, fmt: str) -> Path:
        """Write the whole run (not the moment on the slider) as the CLI's export would."""
        full = RunRecord.from_events(self.events)
        text = (markdown_report(full) if fmt == "md"
                else json.dumps(json_report(full), indent=2, ensure_ascii=False) + "\n")
        path.write_text(text, encoding="utf-8")
        return path
