"""A reference's host beyond ASCII is written as Chromium's URL parser writes it: IDNA's ASCII form.

A page that names an image on ``http://bücher.example/`` makes the browser ask
``http://xn--bcher-kva.example/``, and an MHTML file Chromium saves labels the part so. The reader resolved such a
reference to ``http://b%C3%BCcher.example/``: a capture asked for a host no resolver knows (the part missing), and
a Chromium-saved page's part was not found for the reference (``pdi mhtml check`` called it unsatisfied). Each
reference here is resolved by Chromium (``new URL(reference, base).href``, Debian's Chromium over the DevTools
protocol) and by the reader (:func:`pdi.mhtml.locations.location_key` of the resolved URI): the same.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chromium_helpers import new_tab
from pdi.capture.browser import Pipe, devtools
from pdi.mhtml.locations import location_key, resolve_uri

BASE = "http://host.example/dir/page.html"
CASES = [
    "http://bücher.example/x.png", "//例え.jp/y.png?q=1#f", "http://BÜCHER.example:8080/z.png",
    "http://b%C3%BCcher.example/w.png", "https://straße.de/", "http://u:p@bücher.example/v", "http://ПРИМЕР.рф/",
    "http://mañana.com/a b", "ws://bücher.example/socket", "http://plain.example/a.png", "http://[::1]/x",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[tuple[Pipe, str]]:
    with devtools() as pipe:
        yield pipe, new_tab(pipe)


def chromium_urls(chromium: tuple[Pipe, str], references: list[str]) -> list[str | None]:
    pipe, session = chromium
    probe = f"""({json.dumps(references)}).map((r) => {{ try {{ return new URL(r, {json.dumps(BASE)}).href; }}
        catch (e) {{ return null; }} }})"""
    answer: Any = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session,
                            time.monotonic() + 60)
    return list(answer["result"]["value"])


def reader(reference: str) -> str | None:
    resolved = resolve_uri(BASE, reference)
    return None if resolved is None else location_key(resolved)


def test_hosts_beyond_ascii_are_written_as_chromium_writes_them(chromium: tuple[Pipe, str]) -> None:
    for reference, browser in zip(CASES, chromium_urls(chromium, CASES), strict=True):
        assert browser is not None, reference
        assert reader(reference) == browser, reference


_LABEL = st.text(alphabet=st.sampled_from("abcxyzäöüßéñçøåДЖжЯ日本例えπΣσ0-"), min_size=1, max_size=8)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(_LABEL, min_size=1, max_size=3).map(".".join), min_size=50, max_size=50))
def test_property_a_domain_chromium_takes_the_reader_writes_as_chromium(
    chromium: tuple[Pipe, str], domains: list[str],
) -> None:
    references = [f"http://{domain}.example/p" for domain in domains]
    for reference, browser in zip(references, chromium_urls(chromium, references), strict=True):
        if browser is not None:  # a domain the browser refuses names no part; the reader may keep it as written
            assert reader(reference) == browser, reference
