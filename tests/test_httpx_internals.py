"""The httpx installed is 0.28.1, whose transports' private connection pool ``pdi._answer_head`` and
``pdi.capture.fetch`` replace.

``pyproject.toml`` pins ``httpx==0.28.1``: httpx takes no network backend as an argument, so both modules replace
the connection pool a transport keeps as ``_pool`` with one over their own backend (a head read within a time; a
connection refused to a private address), relying on how the transport makes and uses it. When the installed
httpx is not 0.28.1 these tests fail, each naming the part that changed and what relies on it
(``pdi._answer_head.HTTPX_INTERNALS``): re-check that against the new httpx, then move the pin and the values
here together.

Where the expected values come from:

* the SHA-256 of ``httpx/_transports/default.py``: the ``RECORD`` of httpx's 0.28.1 wheel on PyPI
  (``httpx-0.28.1-py3-none-any.whl``, itself of SHA-256
  ``d909fcccc110f8c7faf814ca82a9a4d816bc5a6dbfea25d6591d6985b8ba59ad``);
* the signatures and the SHA-256 of each part's source (``inspect.getsource``, UTF-8): read from that wheel's
  file, the one its ``RECORD`` vouches for.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import httpcore
import httpx
import pytest

from support.pinned import Pinned

ROOT = Path(__file__).resolve().parent.parent
HTTPX = Path(httpx.__file__).parent

WHEEL_RECORD = {"_transports/default.py": "AzeaRUyVwCccTyyNJexDf0n1dFfzzydpdIQgvw7PLnk"}

_ARGUMENTS = (
    "(self, verify: 'ssl.SSLContext | str | bool' = True, cert: 'CertTypes | None' = None, trust_env: 'bool' = True,"
    " http1: 'bool' = True, http2: 'bool' = False, limits: 'Limits' = Limits(max_connections=100,"
    " max_keepalive_connections=20, keepalive_expiry=5.0), proxy: 'ProxyTypes | None' = None, uds: 'str | None' ="
    " None, local_address: 'str | None' = None, retries: 'int' = 0, socket_options:"
    " 'typing.Iterable[SOCKET_OPTION] | None' = None) -> 'None'"
)
DEFAULT = "httpx._transports.default"
FINGERPRINTS: dict[str, tuple[str | None, str]] = {
    f"{DEFAULT}.HTTPTransport.__init__": (
        _ARGUMENTS, "c5fe8f1eadf4fb491a7b7cb18ca729b208952caa5ed47ad062a558d0f5d880ae"),
    f"{DEFAULT}.HTTPTransport.handle_request": (
        "(self, request: 'Request') -> 'Response'", "9edcd0cdfa4b6872e902526042f467c9571c7f222fb2986e63375c9eddb062be"),
    f"{DEFAULT}.AsyncHTTPTransport.__init__": (
        _ARGUMENTS, "433c33239d86ec87383cba12229bd086b4a92985b25ff8b0859cf028f29250e0"),
    f"{DEFAULT}.AsyncHTTPTransport.handle_async_request": (
        "(self, request: 'Request') -> 'Response'", "4dfd2e15d472a02f00c8033af74acb24d614bbb3f46a6fefb100e82cf4f7bd51"),
}


def relied_on(name: str) -> str:
    from pdi._answer_head import HTTPX_INTERNALS

    return HTTPX_INTERNALS.get(name, "(not listed in HTTPX_INTERNALS)")


PINNED = Pinned("httpx", "0.28.1", HTTPX, "pdi._answer_head and pdi.capture.fetch", WHEEL_RECORD, FINGERPRINTS,
                relied_on)


def test_httpx_is_pinned_to_0_28_1_and_0_28_1_is_installed() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    assert [d for d in dependencies if d.startswith("httpx")] == ["httpx==0.28.1"]
    assert importlib.metadata.version("httpx") == httpx.__version__ == "0.28.1"
    from pdi._answer_head import HTTPX_VERSION

    assert HTTPX_VERSION == "0.28.1"


@pytest.mark.parametrize("path", sorted(WHEEL_RECORD))
def test_httpx_files_are_those_of_the_0_28_1_wheel(path: str) -> None:
    PINNED.check_file(path, "httpx." + path.removesuffix(".py").replace("/", "."))


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_each_httpx_part_relied_on_is_as_in_0_28_1(name: str) -> None:
    PINNED.check_part(name)


def test_the_fingerprints_are_those_of_every_part_listed() -> None:
    from pdi._answer_head import HTTPX_INTERNALS

    assert set(FINGERPRINTS) == set(HTTPX_INTERNALS)


def test_a_transport_keeps_the_pool_it_sends_through_as_its_pool() -> None:
    # what both modules replace is where the transport looks: a pool of their own type answers its requests
    assert isinstance(httpx.HTTPTransport()._pool, httpcore.ConnectionPool)
    assert isinstance(httpx.AsyncHTTPTransport()._pool, httpcore.AsyncConnectionPool)


def test_only_the_two_modules_reach_into_a_transport() -> None:
    found = sorted(
        str(path.relative_to(ROOT)) for path in (ROOT / "src" / "pdi").rglob("*.py")
        if re.search(r"\._pool = (httpcore\.|_TwoPools\()", path.read_text("utf-8"))
    )
    assert found == ["src/pdi/_answer_head.py", "src/pdi/capture/fetch.py"]
