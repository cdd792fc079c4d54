"""``pdi._later.dataclass``: the class :func:`dataclasses.dataclass` makes, made when first instantiated.

Every class a pdi module defines this way is checked against the same class
body processed by :func:`dataclasses.dataclass` itself (fields, options,
``__init__``'s signature, ``__match_args__``); a small class is checked for
what an instance does before and after (equality, hash, repr, frozenness,
``dataclasses.replace``, subclasses, an instance unpickled in a fresh
process, several threads making the first instance at once).
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
import threading
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest

from pdi._later import dataclass, waiting

SRC = Path(__file__).resolve().parents[1] / "src"
#: The modules that define their dataclasses with pdi._later.
LATER = sorted(
    ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
    for path in (SRC / "pdi").rglob("*.py")
    if "from pdi._later import dataclass" in path.read_text(encoding="utf-8")
)


def test_the_archive_and_its_records_use_it() -> None:
    assert {"pdi.archive.store", "pdi.archive.results", "pdi.archive.access"} <= set(LATER)


_COMPARE = """
import dataclasses, importlib, inspect, json, sys
from pdi import _later

def fields(cls):
    return [repr((f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only))
            for f in dataclasses.fields(cls)]

checked, wrong = [], []
for module in sys.argv[1:]:
    importlib.import_module(module)
for cls in _later.waiting():
    body = {name: value for name, value in vars(cls).items()
            if name not in ("__init__", "__setstate__", "__dict__", "__weakref__")}
    twin = dataclasses.dataclass(type(cls.__name__, cls.__bases__, body), **_later._waiting[cls])
    was = dataclasses.is_dataclass(cls)
    _later.made(cls)
    same = (not was and dataclasses.is_dataclass(cls) and cls not in _later.waiting()
            and fields(cls) == fields(twin)
            and repr(cls.__dataclass_params__) == repr(twin.__dataclass_params__)
            and inspect.signature(cls) == inspect.signature(twin)
            and getattr(cls, "__match_args__", None) == getattr(twin, "__match_args__", None)
            and all((m in vars(cls)) == (m in vars(twin))
                    for m in ("__eq__", "__hash__", "__repr__", "__setattr__", "__delattr__", "__lt__")))
    (checked if same else wrong).append(f"{cls.__module__}.{cls.__qualname__}")
print(json.dumps({"checked": checked, "wrong": wrong}))
"""


def test_each_class_is_what_dataclasses_makes_of_the_same_body() -> None:
    """In a fresh interpreter (nothing made yet): each waiting class, made, equals its body made by dataclasses."""
    result = subprocess.run([sys.executable, "-c", _COMPARE, *LATER], capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    assert report["wrong"] == []
    assert len(report["checked"]) >= 40
    assert "pdi.archive.store.RepresentationRecord" in report["checked"]


@dataclass(frozen=True)
class Point:
    """A record for the tests below."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)

    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


@dataclass(frozen=True)
class Labelled(Point):
    label: str = ""


class Plain(Point):
    """A subclass that is no dataclass of its own."""


def test_an_instance_behaves_as_a_dataclass_instance() -> None:
    point = Point(1, y=-2)
    assert Point not in waiting()
    assert point == Point(1, -2, ()) and point != Point(1, 2)
    assert hash(point) == hash(Point(1, -2))
    assert repr(point) == "Point(x=1, y=-2, tags=())"
    assert point.norm() == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    assert dataclasses.replace(point, x=4) == Point(4, -2)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]


def test_subclasses_have_their_bases_fields() -> None:
    assert Point not in waiting()  # made when Labelled was defined
    assert Labelled(1, 2, label="a") == Labelled(x=1, y=2, tags=(), label="a")
    assert [f.name for f in dataclasses.fields(Labelled)] == ["x", "y", "tags", "label"]
    assert Plain(3).norm() == 3 and isinstance(Plain(3), Point)


def test_slots_and_own_init_are_made_at_once() -> None:
    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    @dataclass(frozen=True)
    class Own:
        a: int

        def __init__(self, a: int) -> None:
            object.__setattr__(self, "a", a * 2)

    assert dataclasses.is_dataclass(Slotted) and dataclasses.is_dataclass(Own)
    assert Slotted.__slots__ == ("a",) and Own(2).a == 4


def _race(cls: Any, threads: int = 6, each: int = 20) -> tuple[list[Any], list[BaseException]]:
    """``threads`` threads, started together, each making ``each`` instances of ``cls``: what they made, what failed."""
    start = threading.Barrier(threads)
    got: list[Any] = []
    failed: list[BaseException] = []

    def make() -> None:
        start.wait()
        try:
            got.extend(cls(n) for n in range(each))
        except BaseException as exc:
            failed.append(exc)

    running = [threading.Thread(target=make) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return got, failed


def test_threads_making_the_first_instance_at_once() -> None:
    """Threads that make the first instances of a class together all get a whole one (a hundred classes).

    The interpreter switches threads as often as it can meanwhile: a class
    left without an ``__init__`` for a moment while it is made (as when the
    stand-in was removed before ``dataclasses`` wrote the real one) failed
    here for most of the classes ("takes no arguments").
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(100):
            @dataclass(frozen=True)
            class Raced:
                a: int
                b: tuple[int, ...] = field(default_factory=tuple)

            got, failed = _race(Raced)
            assert failed == []
            assert sorted(got, key=lambda r: r.a) == sorted([Raced(n) for n in range(20)] * 6, key=lambda r: r.a)
    finally:
        sys.setswitchinterval(interval)


_UNPICKLE = """
import pickle, sys
sys.path.insert(0, sys.argv[2])
from pdi._later import waiting
import later_sample
assert later_sample.Sample in waiting()
got = pickle.loads(bytes.fromhex(sys.argv[1]))
print(got == later_sample.Sample(1, "a"), repr(got), later_sample.Sample in waiting())
"""


def test_an_instance_unpickled_before_any_was_made(tmp_path: Path) -> None:
    (tmp_path / "later_sample.py").write_text(
        "from pdi._later import dataclass\n\n@dataclass(frozen=True)\nclass Sample:\n    n: int\n    s: str\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import later_sample  # type: ignore[import-not-found]

        pickled = pickle.dumps(later_sample.Sample(1, "a")).hex()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("later_sample", None)
    result = subprocess.run([sys.executable, "-c", _UNPICKLE, pickled, str(tmp_path)],
                            capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "Sample(n=1,", "s='a')", "False"]


def test_an_instance_filled_without_its_init_is_the_one_its_init_makes() -> None:
    """``filled``: a frozen record's instance made from its fields' values without its ``__init__`` (the class not
    made yet, then made) equals, hashes and prints as the instance ``__init__`` makes, and stays frozen."""
    import datetime

    from pdi._later import filled
    from pdi.archive.blobs import BlobInfo
    from pdi.archive.store import DocumentKey, PublicVersion, RepresentationRecord

    @dataclass(frozen=True)
    class Fresh:
        name: str
        day: datetime.date
        size: int = 0
        note: str | None = None

    values: dict[str, Any] = {"name": "a", "day": datetime.date(2026, 11, 28), "size": 3, "note": None}
    assert Fresh in waiting()
    quick = filled(Fresh, dict(values))
    assert Fresh not in waiting()
    usual = Fresh(**values)
    assert quick == usual and hash(quick) == hash(usual) and repr(quick) == repr(usual)
    assert dataclasses.replace(quick, size=4) == Fresh("a", values["day"], 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.size = 5  # type: ignore[misc]
    record_values: dict[str, Any] = {
        "series": "a.us", "day": datetime.date(2026, 11, 28), "unique_id": "7", "serial": 7, "version": 1,
        "format": "text", "media_type": "text/plain", "charset": None, "line_ending": "lf", "sha256": "0" * 64,
        "size": 3, "created_at": "2026-11-28T00:00:00.000000Z", "stored": "exact", "purged": None}
    record = filled(RepresentationRecord, dict(record_values))
    assert record == RepresentationRecord(**record_values) and hash(record) == hash(RepresentationRecord(**record_values))
    assert set(record_values) == {f.name for f in dataclasses.fields(record)}
    found = filled(PublicVersion, {"records": (record,), "record": record, "path": "/x", "size": 3,
                                   "chunk_size": 1 << 20, "chunks": b"", "data": b"abc"})
    assert found == PublicVersion((record,), record, "/x", 3, 1 << 20, b"", b"abc")
    assert pickle.loads(pickle.dumps(found)) == found
    key = filled(DocumentKey, {"series": "a.us", "day": datetime.date(2026, 11, 28), "unique_id": "7"})
    assert key == DocumentKey("a.us", datetime.date(2026, 11, 28), "7") and hash(key) == hash(DocumentKey(
        "a.us", datetime.date(2026, 11, 28), "7"))
    info = filled(BlobInfo, {"sha256": "0" * 64, "size": 3, "chunk_size": 1 << 20, "chunks": b"\x01" * 32})
    assert info == BlobInfo("0" * 64, 3, 1 << 20, b"\x01" * 32) and info.chunked and info.chunk_count() == 1
