"""docs/parity.md holds the Python column to the code: every name of a Python `yes:` cell
is an attribute path of the `keyroute` module (`Ring.get`, `KeyrouteError.code`, ...),
and every cell is `yes: ...` or `no: <reason>`."""

from __future__ import annotations

import importlib
import os
import re
import types
from pathlib import Path

import pytest

import keyroute

PARITY = Path(
    os.environ.get(
        "KEYROUTE_PARITY", Path(__file__).resolve().parents[2] / "docs" / "parity.md"
    )
)


def _python_cells() -> list[tuple[str, str]]:
    """(capability, Python cell) of every row of the table."""
    lines = PARITY.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| capability"))
    columns = [c.strip() for c in lines[header].strip("|").split("|")]
    python = columns.index("Python")
    rows = []
    for line in lines[header + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == len(columns), line
        rows.append((cells[0], cells[python]))
    return rows


ROWS = _python_cells()


def test_table_has_rows() -> None:
    assert len(ROWS) >= 20


@pytest.mark.parametrize("capability,cell", ROWS, ids=[r[0] for r in ROWS])
def test_python_cell(capability: str, cell: str) -> None:
    if cell.startswith("no: "):
        assert len(cell) > len("no: ") + 10, f"{capability}: a no needs a reason"
        return
    assert cell.startswith("yes: "), f"{capability}: {cell!r} is neither yes: nor no:"
    names = re.findall(r"`([^`]+)`", cell)
    assert names, f"{capability}: a yes names what provides it"
    for name in names:
        obj: object = keyroute
        path = "keyroute"
        for part in name.split("."):
            path += "." + part
            if not hasattr(obj, part) and isinstance(obj, types.ModuleType):
                # A submodule (keyroute.serve) is an attribute once imported.
                try:
                    importlib.import_module(path)
                except ImportError:
                    pass
            assert hasattr(obj, part), f"{capability}: keyroute.{name} does not exist"
            obj = getattr(obj, part)
