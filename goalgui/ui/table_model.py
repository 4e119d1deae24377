"""What every flat table of goalgui's has in common: named columns over a list of rows."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, Qt

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)


class ColumnsModel(QAbstractTableModel):
    """A flat model with the header `COLUMNS`; a subclass says how many rows it shows (`shown_rows`)
    and what a cell holds for a role (`cell`)."""

    COLUMNS: tuple[str, ...] = ()

    def shown_rows(self) -> int:
        raise NotImplementedError

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else self.shown_rows()

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 (Qt's name)
        if orientation == Qt.Orientation.Horizontal and int(role) == _DISPLAY:
            return self.COLUMNS[section]
        return None

    def cell(self, row: int, column: int, role: int):
        raise NotImplementedError

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        return self.cell(index.row(), index.column(), int(role)) if index.isValid() else None


class FollowsStyle:
    """A mixin of a view over a `ColumnsModel`: light or dark, it recolours (`restyle`); another font,
    its columns are sized again (`_size_columns`)."""

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle(self.palette())
        elif event.type() == QEvent.Type.FontChange:
            self._size_columns()
        super().changeEvent(event)
