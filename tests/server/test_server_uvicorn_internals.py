"""The uvicorn installed is 0.54.0, whose private parts ``pdi.server.process.connection`` extends.

``pyproject.toml`` pins ``uvicorn==0.54.0``: ``pdi.server.process.connection``
subclasses uvicorn's ``httptools`` protocol and reads its request-response
cycle (as ``pdi.server.process.zerocopy`` does), and relies on how they work
inside. When the installed uvicorn is not 0.54.0 (a moved pin, a patched copy)
these tests fail, each naming the part of uvicorn that changed and what in
``pdi.server.process`` relies on it (its ``UVICORN_INTERNALS``): re-check that
against the new uvicorn, then move the pin and the values here together.

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

import importlib
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
    "protocols/http/httptools_impl.py": "HU4cV530FoQzphoB8QxiizHBeQ5y3Zdp0rhjOyIhQDM",
    "protocols/http/flow_control.py": "050WVg31EvPOkHwynCoMP1zXFl_vO3U4durlc5vyp4U",
    "server.py": "wb6dEzRnpCq4jXFo5AjvWpAldmGpAYmUJiFKPR_C0CY",
}

# Each private part of uvicorn that pdi.server.process relies on: its signature in 0.54.0
# (None for a class) and the SHA-256 of its source text in 0.54.0.
PROTOCOL = "uvicorn.protocols.http.httptools_impl.HttpToolsProtocol"
CYCLE = "uvicorn.protocols.http.httptools_impl.RequestResponseCycle"
FINGERPRINTS: dict[str, tuple[str | None, str]] = {
    PROTOCOL: (None, "18fdf324b11bf160e38739eed01a48516b460be9e88f1e20e4546e7363fd9232"),
    f"{PROTOCOL}.__init__": (
        "(self, config: 'Config', server_state: 'ServerState', app_state: 'dict[str, Any]',"
        " _loop: 'asyncio.AbstractEventLoop | None' = None) -> 'None'",
        "4f08999410347141468656d82e71ffebccb59f09e41909a3753a810eeed685fa",
    ),
    f"{PROTOCOL}.connection_made": (
        "(self, transport: 'asyncio.Transport') -> 'None'",
        "6efb565ff3d36b916c29bd42330a2b99b601b48932389e396e5ac53dbef6b91c",
    ),
    f"{PROTOCOL}.connection_lost": (
        "(self, exc: 'Exception | None') -> 'None'",
        "c91a4c9bf2e29c554a97418b5f3064e97f6e0ceaba3b90fc35a3460076c705ab",
    ),
    f"{PROTOCOL}.on_url": (
        "(self, url: 'bytes') -> 'None'", "37be44e962b04ca87f76428ff8d7a3306ab601ffd5793d185e87c2295f0c6b6e"),
    f"{PROTOCOL}.on_header": (
        "(self, name: 'bytes', value: 'bytes') -> 'None'",
        "65d62c044f61fdbd354dcb3401aa590789259bfbdbc1c07512150ec924258cd6",
    ),
    f"{PROTOCOL}.on_message_begin": (
        "(self) -> 'None'", "96d377fdc7c2baef943c2bd245003abc53566ddb35777e0f4c7bc754198b5457"),
    f"{PROTOCOL}.data_received": (
        "(self, data: 'bytes') -> 'None'", "010a7ae59a5d3b1a5e7326ce246878568629d126a076d8af5ba10cab040fae43"),
    f"{PROTOCOL}._unsupported_upgrade_warning": (
        "(self) -> 'None'", "55bbd2762b189d9a9d833d550e80b7e21b494f79c410523c9beb46e00e75b5b6"),
    f"{PROTOCOL}.send_400_response": (
        "(self, msg: 'str') -> 'None'", "ae5a4a3782b646fdd2d0ec5cfc28814fda9b6e3464bf6f45c58839982319bd0c"),
    f"{PROTOCOL}.on_headers_complete": (
        "(self) -> 'None'", "1ea8589acfad92d8ff9182775f337d98fc469e0fa39642a83195fca920f5ca96"),
    f"{PROTOCOL}.on_body": (
        "(self, body: 'bytes') -> 'None'", "dba9c32aeba35b6ae10722f86232d44d93fda42d97711244eeaa51c0a1f3e1c9"),
    f"{PROTOCOL}.on_message_complete": (
        "(self) -> 'None'", "1fbad42dc31fc01fd4106a9885b2a2e0f6ce8d38241a3df0f615c6a8663493e0"),
    f"{PROTOCOL}.on_response_complete": (
        "(self) -> 'None'", "64e254f28e389e7614f2c828176d639174e66aa9d814a4b06624ec86ec0a5b95"),
    f"{PROTOCOL}.shutdown": ("(self) -> 'None'", "d7351fa33f00d430e0a4179912a4ed478e0483ce3a9f7409225e71970c064421"),
    f"{PROTOCOL}._unset_keepalive_if_required": (
        "(self) -> 'None'", "00a6a4e47214e68edef469a2a8f21ade722e9c6dfb2eb6c25855fbd9941cec32"),
    f"{PROTOCOL}.timeout_keep_alive_handler": (
        "(self) -> 'None'", "8b53bf5f2e202970f6f6c0338a5c381c66efce4e9c673b05175d858eef5fd888"),
    f"{CYCLE}.__init__": (
        "(self, scope: 'HTTPScope', transport: 'asyncio.Transport', flow: 'FlowControl',"
        " logger: 'logging.Logger', access_logger: 'logging.Logger', access_log: 'bool',"
        " default_headers: 'list[tuple[bytes, bytes]]', message_event: 'asyncio.Event',"
        " expect_100_continue: 'bool', keep_alive: 'bool', on_response: 'Callable[..., None]')",
        "4d2f220910c33c12f2891cbf2fb89ad364464e1a189e7492e8dc43167563057a",
    ),
    f"{CYCLE}.send": (
        "(self, message: 'ASGISendEvent') -> 'None'",
        "abdd8601b326a8da972436918d3a954e1ef39c6bf0cd9e1c1954c2e798d0bb9c",
    ),
    f"{CYCLE}.receive": (
        "(self) -> 'ASGIReceiveEvent'", "8124ae006be71184810da91d586b97c4b3b9ae43e28984bc94f81e26d20af3e6"),
    f"{PROTOCOL}.pause_writing": (
        "(self) -> 'None'", "17a8fd215d96a13cc140babd064bae54cdf1ca495272beb669b022a4ddab7262"),
    f"{PROTOCOL}.resume_writing": (
        "(self) -> 'None'", "7844bbaa8cceb1ef14d74f44c229ecf7a12d1011f2017c8d4299ff92375273d4"),
    "uvicorn.protocols.http.flow_control.FlowControl.__init__": (
        "(self, transport: asyncio.transports.Transport) -> None",
        "0152d94a040758b54ff88c0aa648265992c93284d2f6a6c49dc7e833906fba27",
    ),
    "uvicorn.server.ServerState.__init__": (
        "(self) -> 'None'", "8daf3a9b4e4e424520b5f7fd00df3eeb4eed5cb7bdcd17a8a2e15fbe89c06ea8"),
}


def relied_on(name: str) -> str:
    """What in pdi.server.process relies on the uvicorn part ``name``, for a failure's message.

    Imported here, not at the top: with another uvicorn the module may not
    import, and the tests must still say which part changed.
    """
    try:
        from pdi.server.process.connection import UVICORN_INTERNALS
    except Exception as exc:  # any error uvicorn raises while the module is set up
        return f"pdi.server.process.connection, which does not even import with it ({type(exc).__name__}: {exc})"
    return UVICORN_INTERNALS.get(name, "(not listed in UVICORN_INTERNALS)")


PINNED = Pinned(
    "uvicorn", "0.54.0", UVICORN, "pdi.server.process", WHEEL_RECORD, FINGERPRINTS, relied_on,
)


def test_uvicorn_is_pinned_to_0_54_0_and_0_54_0_is_installed() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    assert [d for d in dependencies if d.startswith("uvicorn")] == ["uvicorn==0.54.0"], (
        "pyproject.toml must pin uvicorn==0.54.0, the version pdi.server.process.connection was checked against;"
        " to move the pin, re-check every part in its UVICORN_INTERNALS and update this test's values"
    )
    assert importlib.metadata.version("uvicorn") == uvicorn.__version__ == "0.54.0", (
        f"uvicorn {uvicorn.__version__} is installed, not the 0.54.0 pyproject.toml pins"
    )
    from pdi.server.process.connection import UVICORN_VERSION

    assert UVICORN_VERSION == "0.54.0"


@pytest.mark.parametrize("path", sorted(WHEEL_RECORD))
def test_uvicorn_files_are_those_of_the_0_54_0_wheel(path: str) -> None:
    PINNED.check_file(path, "uvicorn." + path.removesuffix(".py").replace("/", "."))


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_each_uvicorn_part_relied_on_is_as_in_0_54_0(name: str) -> None:
    PINNED.check_part(name)


def test_the_fingerprints_are_those_of_every_part_listed() -> None:
    from pdi.server.process.connection import UVICORN_INTERNALS

    assert set(FINGERPRINTS) == set(UVICORN_INTERNALS)


def test_every_uvicorn_method_overridden_is_listed() -> None:
    from pdi.server.process import connection
    from pdi.server.process.connection import UVICORN_INTERNALS

    overridden = set()
    for cls in (connection.GuardedHttpToolsProtocol, connection.CachedAnswerProtocol):
        for attribute, value in vars(cls).items():
            if not inspect.isfunction(value):
                continue
            for base in cls.__mro__[1:]:
                if attribute in vars(base) and base.__module__.startswith("uvicorn"):
                    overridden.add(f"{base.__module__}.{base.__qualname__}.{attribute}")
                    break
    assert overridden == {
        f"{PROTOCOL}.__init__", f"{PROTOCOL}.connection_made", f"{PROTOCOL}.on_headers_complete",
        f"{PROTOCOL}.on_response_complete", f"{PROTOCOL}.connection_lost",
        f"{PROTOCOL}._unset_keepalive_if_required",  # disarms the protocol's own idle timer too
        # the request head's bounds, and a problem for what the parser refuses
        f"{PROTOCOL}.data_received", f"{PROTOCOL}.on_message_begin", f"{PROTOCOL}.on_url", f"{PROTOCOL}.on_header",
        f"{PROTOCOL}.send_400_response", f"{PROTOCOL}.on_message_complete",
        f"{PROTOCOL}._unsupported_upgrade_warning",  # an Upgrade ignored: the octets after its head read on
        f"{PROTOCOL}.on_body",  # a chunk's octets came: what follows its size line is not a trailer section
        # the send deadline: armed while the transport's buffer is past its high-water mark
        f"{PROTOCOL}.pause_writing", f"{PROTOCOL}.resume_writing",
    }
    assert overridden <= set(UVICORN_INTERNALS)


def test_uvicorn_is_imported_privately_only_by_the_connection_module() -> None:
    # every other module of pdi uses uvicorn's public API (uvicorn.Config, uvicorn.Server) or none
    private = []
    for path in sorted((ROOT / "src" / "pdi").rglob("*.py")):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if ("from uvicorn." in line or "import uvicorn." in line) and path.name != "connection.py":
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
    from pdi.server.process.connection import status_line

    assert status_line(status) == line
