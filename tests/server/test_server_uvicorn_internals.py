"""The uvicorn installed is 0.54.0, whose server ``pdi.server.process.http11``'s protocol is made by.

``pdi serve`` has its own HTTP/1.1 protocol (``pdi.server.process.http11``, on
``asyncio.Protocol``, ``httptools``' parser and ASGI 3); uvicorn's server makes
one for each connection (``uvicorn.Config(http=...)``). What of uvicorn that
relies on is the contract between its server and such a class
(``http11.UVICORN_CONTRACT``: the keywords the protocol is made with, the
``ServerState`` it shares, ``Config.load``'s ``loaded_app``), which uvicorn
does not document; ``pyproject.toml`` pins ``uvicorn==0.54.0`` and these tests
fail, each naming the part of uvicorn that changed and what relies on it, when
the installed uvicorn differs in any of them: re-check that against the new
uvicorn, then move the pin and the values here together. No class of pdi
extends one of uvicorn's, and no module imports uvicorn's private modules.

Where the expected values come from:

* the SHA-256 of each uvicorn file: the ``RECORD`` of uvicorn's 0.54.0 wheel
  on PyPI (``uvicorn-0.54.0-py3-none-any.whl``, itself of SHA-256
  ``505bdb0f318731d45f1f712071fc781a8981f6847a31c902c9f5e652d4f67faf``);
* the signatures: as written in uvicorn 0.54.0's source;
* the SHA-256 of each part's source (``inspect.getsource``, UTF-8): taken
  from the files of that wheel, the ones its ``RECORD`` vouches for;
* the status lines: RFC 9110 §15's reason phrases of 200, 206 and 304, and RFC 7233
  §4.4's of 416 (the phrase uvicorn writes, Python's ``http.HTTPStatus``).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import tomllib
from pathlib import Path

import pytest
import uvicorn

from support.pinned import Pinned

ROOT = Path(__file__).resolve().parents[2]
UVICORN = Path(uvicorn.__file__).parent

# From uvicorn-0.54.0.dist-info/RECORD in the 0.54.0 wheel: the files uvicorn's parts below live in.
WHEEL_RECORD = {
    "server.py": "wb6dEzRnpCq4jXFo5AjvWpAldmGpAYmUJiFKPR_C0CY",
    "config.py": "z5HG_64oOisgINqVS0zE7UfTJGywYq_Qn7d9mOTFyoc",
}

# Each part of uvicorn's server-to-protocol contract that pdi.server.process.http11 relies on: its signature in
# 0.54.0 and the SHA-256 of its source text in 0.54.0.
FINGERPRINTS: dict[str, tuple[str | None, str]] = {
    "uvicorn.server.Server.startup": (
        "(self, sockets: 'list[socket.socket] | None' = None) -> 'None'",
        "2aa1d70a244bfcf21a1ae57e0152f9c20e40f756ffc328ccc58037f6ae8e2dfc",
    ),
    "uvicorn.server.Server.shutdown": (
        "(self, sockets: 'list[socket.socket] | None' = None) -> 'None'",
        "9b33c50562992b1e3cef2a9611408ece6c01d46ee17eaae2091b6091bf826eab",
    ),
    "uvicorn.server.Server.capture_signals": (
        "(self) -> 'Generator[None, None, None]'",
        "e1bbcd4770d1c8877454c17466d7bb229ec2cb9776e12703830ff64fc024758f",
    ),
    "uvicorn.server.Server.on_tick": (
        "(self, counter: 'int') -> 'bool'", "60ea49b06ccf68c11e91a3b8676b56f3b8ab13c86e6c9fa4654731063d8f9bd0"),
    "uvicorn.server.ServerState.__init__": (
        "(self) -> 'None'", "8daf3a9b4e4e424520b5f7fd00df3eeb4eed5cb7bdcd17a8a2e15fbe89c06ea8"),
    "uvicorn.config.Config.load": (
        "(self) -> 'None'", "92b7159dce105a9cec9ba0e923b2254f2a7b1e6788fd836d19dc091fd67bf481"),
}


def relied_on(name: str) -> str:
    """What in pdi.server.process relies on the uvicorn part ``name``, for a failure's message.

    Imported here, not at the top: with another uvicorn the module may not
    import, and the tests must still say which part changed.
    """
    try:
        from pdi.server.process.http11 import UVICORN_CONTRACT
    except Exception as exc:  # any error uvicorn raises while the module is set up
        return f"pdi.server.process.http11, which does not even import with it ({type(exc).__name__}: {exc})"
    return UVICORN_CONTRACT.get(name, "(not listed in UVICORN_CONTRACT)")


PINNED = Pinned(
    "uvicorn", "0.54.0", UVICORN, "pdi.server.process.http11", WHEEL_RECORD, FINGERPRINTS, relied_on,
)


def test_uvicorn_is_pinned_to_0_54_0_and_0_54_0_is_installed() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    assert [d for d in dependencies if d.startswith("uvicorn")] == ["uvicorn==0.54.0"], (
        "pyproject.toml must pin uvicorn==0.54.0, the version pdi.server.process.http11 was checked against;"
        " to move the pin, re-check every part in its UVICORN_CONTRACT and update this test's values"
    )
    assert importlib.metadata.version("uvicorn") == uvicorn.__version__ == "0.54.0", (
        f"uvicorn {uvicorn.__version__} is installed, not the 0.54.0 pyproject.toml pins"
    )
    from pdi.server.process.http11 import UVICORN_VERSION

    assert UVICORN_VERSION == "0.54.0"


@pytest.mark.parametrize("path", sorted(WHEEL_RECORD))
def test_uvicorn_files_are_those_of_the_0_54_0_wheel(path: str) -> None:
    PINNED.check_file(path, "uvicorn." + path.removesuffix(".py").replace("/", "."))


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_each_uvicorn_part_relied_on_is_as_in_0_54_0(name: str) -> None:
    PINNED.check_part(name)


def test_the_fingerprints_are_those_of_every_part_listed() -> None:
    from pdi.server.process.http11 import UVICORN_CONTRACT

    assert set(FINGERPRINTS) == set(UVICORN_CONTRACT)


def test_no_class_of_pdi_extends_one_of_uvicorns() -> None:
    # the connection's protocol and the request's cycle are pdi's own (pdi.server.process.http11)
    from pdi.server.process import connection, http11, zerocopy

    extended = [
        f"{cls.__qualname__} < {base.__module__}.{base.__qualname__}"
        for module in (connection, http11, zerocopy)
        for cls in vars(module).values() if inspect.isclass(cls)
        for base in cls.__mro__[1:] if base.__module__.split(".")[0] == "uvicorn"
    ]
    assert extended == []
    assert issubclass(connection.CachedAnswerProtocol, http11.HttpProtocol)


def test_uvicorn_is_used_only_through_its_top_level_names() -> None:
    # every module of pdi uses uvicorn.Config, uvicorn.Server (and uvicorn.config.LOGGING_CONFIG, its documented
    # log_config default) or none: no import of a module inside uvicorn
    private = []
    for path in sorted((ROOT / "src" / "pdi").rglob("*.py")):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if "from uvicorn." in line or "import uvicorn." in line:
                private.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert private == []


@pytest.mark.parametrize(("status", "line"), [
    (200, b"HTTP/1.1 200 OK\r\n"),  # RFC 9110 §15.3.1
    (206, b"HTTP/1.1 206 Partial Content\r\n"),  # §15.3.7
    (304, b"HTTP/1.1 304 Not Modified\r\n"),  # §15.4.5
    # §15.5.17 renamed it "Range Not Satisfiable"; uvicorn writes Python's http.HTTPStatus phrase, RFC 7233 §4.4's
    (416, b"HTTP/1.1 416 Requested Range Not Satisfiable\r\n"),
])
def test_the_status_lines_of_cached_answers_are_those_of_rfc_9110(status: int, line: bytes) -> None:
    from pdi.server.process.http11 import status_line

    assert status_line(status) == line
