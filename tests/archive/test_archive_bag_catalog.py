"""catalog.json read as a stream (``pdi import``): what the streamed reader sees is what ``json`` sees whole.

The oracle is the standard library's :func:`json.loads` of the same bytes:
the top-level values that are not lists, each top-level list's length, and
each list's items in order. Any other bytes are a syntax error naming
catalog.json, never another exception.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive.bagit.catalog import _catalog_header, _Section
from pdi.errors import IntegrityError, ParseError

scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.text(max_size=8)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                      max_leaves=12)
catalogs = st.dictionaries(
    st.sampled_from(["format", "version", "source", "series", "representations", "assertions", "x"]),
    values | st.lists(st.dictionaries(st.text(max_size=4), scalars, max_size=3), max_size=4),
    max_size=7,
)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(catalog=catalogs, indent=st.sampled_from([None, 0, 2]))
def test_the_streamed_header_and_sections_match_json_loads(tmp_path: Path, catalog: dict[str, Any], indent: int | None) -> None:
    path = tmp_path / "catalog.json"
    data = json.dumps(catalog, indent=indent).encode()
    path.write_bytes(data)
    whole = json.loads(data)
    header = _catalog_header(path)
    assert header.lists == {k: len(v) for k, v in whole.items() if isinstance(v, list)}
    assert {k: v for k, v in header.values.items() if not isinstance(whole[k], dict)} == {
        k: v for k, v in whole.items() if not isinstance(v, (list, dict))
    }
    sha = hashlib.sha256(data).hexdigest()
    for name, items in whole.items():
        if not isinstance(items, list):
            continue
        if all(isinstance(i, dict) for i in items):
            assert list(_Section(path, sha, name)) == items
        else:
            with pytest.raises(ParseError, match=f"{name} must be a list of objects"):
                list(_Section(path, sha, name))


@SETTINGS
@given(data=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_any_other_bytes_are_a_syntax_error_or_a_header(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "catalog.json"
    path.write_bytes(data)
    try:
        whole = json.loads(data)
    except ValueError:
        whole = ValueError
    if isinstance(whole, dict):
        assert _catalog_header(path).lists == {k: len(v) for k, v in whole.items() if isinstance(v, list)}
    else:
        with pytest.raises(ParseError, match=r"catalog\.json|pdi archive export"):
            _catalog_header(path)


def test_a_catalog_changed_between_passes_is_refused_at_the_end_of_the_pass(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"representations": [{"a": 1}, {"a": 2}]}))
    validated = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(json.dumps({"representations": [{"a": 1}, {"a": 3}]}))
    with pytest.raises(IntegrityError, match="changed during the import"):
        list(_Section(path, validated, "representations"))


_READ_BOTH = """import sys
from pathlib import Path
from pdi.archive.bagit.catalog import _catalog_header
from pdi.archive.bagit.imports import is_pdi_export
from pdi.errors import ParseError
bag = Path(sys.argv[1])
print(is_pdi_export(bag))
try:
    _catalog_header(bag / "data" / "catalog.json")
except ParseError as exc:
    print(exc)
"""


@pytest.mark.parametrize(("catalog", "said"), [
    # found by an attack (2026-11-27): 40 KB nested 20,000 deep took 1 GB (every event's path kept), 80 KB 40,000
    # deep 3.9 GB; and an integer of 4,301 digits crashed the process (ijson's C reader: SIGSEGV)
    (b'{"format": "pdi-archive-export", "x": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", "nests more than 100 deep"),
    (b'{"x": ' + b"[" * 20_000 + b"]" * 20_000 + b', "format": "pdi-archive-export"}', "nests more than 100 deep"),
    (b'{"format": "pdi-archive-export", "version": ' + b"9" * 4301 + b"}", None),
    (b'{"version": ' + b"9" * 4301 + b', "format": "pdi-archive-export"}', None),
])
def test_a_strangers_catalog_is_read_in_bounded_memory_without_crashing(tmp_path: Path, catalog: bytes,
                                                                        said: str | None) -> None:
    import subprocess
    import sys

    from peak_memory import run_with_peak

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "catalog.json").write_bytes(catalog)
    status, peak, out = run_with_peak([sys.executable, "-c", _READ_BOTH, str(tmp_path)], stdout=subprocess.PIPE)
    assert status == 0, (status, out[-300:])  # not -11
    lines = out.decode().splitlines()
    assert lines[0] in ("True", "False")
    if said is not None:
        assert said in lines[1]
    assert peak < 150 * 1024, f"peak {peak // 1024} MiB"
