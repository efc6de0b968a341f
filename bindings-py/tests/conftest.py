"""Shared fixtures: where the cross-language vectors live."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

# bindings-py/tests -> repository root -> tests/vectors (override with KEYROUTE_VECTORS).
VECTORS = Path(
    os.environ.get("KEYROUTE_VECTORS", Path(__file__).resolve().parents[2] / "tests" / "vectors")
)


def vector_files(kind: str) -> list[Path]:
    return sorted((VECTORS / kind).glob("*.json"))


def load(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    assert VECTORS.is_dir(), f"vectors not found at {VECTORS}; set KEYROUTE_VECTORS"
    return VECTORS
