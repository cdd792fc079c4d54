"""A capture of the page an EARLIER withdrawn version holds, with a version in service after it (pdi.capture.deposit).

docs/reference/capture.md: a withdrawn version's page is refused naming the withdrawal (exit 5), in its very octets or
in another file holding the same parts (RFC 2557 compared by its parts), or it would serve again as the next version.
That held for a withdrawn NEWEST version only: with another version captured after it, the withdrawn page became the
next version again. Any withdrawn version whose octets are kept is compared now (the last 20), and the forced capture
deposits it all the same. A purged one cannot be compared (a purge keeps the file's SHA-256 and size, which another
wrapper changes), nor one past the last 20: the deposit warns, naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from one_page import Handler, rewrapped

from pdi.archive import Archive
from pdi.capture import capture
from pdi.capture.deposit import deposit_capture
from pdi.errors import ImmutabilityError

S = "web.example.us"


def _capture(url: str, body: bytes) -> bytes:
    Handler.body = body
    return capture(url, allow_private=True).mhtml


@pytest.mark.parametrize("wrapper", ["its very octets", "another wrapper"])
@pytest.mark.usefixtures("one_gmt_day")
def test_the_page_of_an_earlier_withdrawn_version_is_refused_after_a_later_one(
        server: str, location: str, wrapper: str) -> None:
    url = f"{server}/page.html"
    first = _capture(url, b"<p>libellous edition</p>")
    with Archive.init(location) as archive:
        archive.add_series(S)
        (name,) = deposit_capture(archive, S, url, first)
        archive.withdraw(name, "libel, by order")
        assert deposit_capture(archive, S, url, _capture(url, b"<p>corrected edition</p>")).names == (
            name.with_version(2),)
        again = _capture(url, b"<p>libellous edition</p>")
        if wrapper == "another wrapper":
            again = rewrapped(again)
            assert again != first
        else:
            assert again == first  # pdi's own writer is deterministic
        with pytest.raises(ImmutabilityError) as refused:
            deposit_capture(archive, S, url, again)
        said = str(refused.value)
        assert str(name) in said and "withdrawn" in said and "libel, by order" in said, said
        assert str(name.with_version(2)) not in said, said
        assert refused.value.forceable
        assert archive.versions(name) == [1, 2]
        forced = deposit_capture(archive, S, url, again, force=True)
        assert forced.names == (name.with_version(3),)
        assert b"libellous edition" in archive.get(name.with_version(3)).data


@pytest.mark.usefixtures("one_gmt_day")
def test_a_purged_earlier_page_in_another_wrapper_cannot_be_compared_and_is_the_next_version_with_a_warning(
        server: str, location: str) -> None:
    # nothing is kept to compare its parts with (a purge keeps the file's SHA-256 and size, which another wrapper
    # changes); its very octets would still be refused (the catalog keeps SHA-256). The deposit says so, naming the
    # purged version, as it does for a purged newest version
    url = f"{server}/page.html"
    with Archive.init(location) as archive:
        archive.add_series(S)
        (name,) = deposit_capture(archive, S, url, _capture(url, b"<p>libellous edition</p>"))
        archive.withdraw(name, "libel, by order", purge=True)
        warned: list[str] = []
        deposit_capture(archive, S, url, _capture(url, b"<p>corrected edition</p>"), warn=warned.append)
        (said,) = warned  # version 2 is a new page: the purged newest version 1 could not be compared with it
        warned.clear()
        with pytest.raises(ImmutabilityError):
            deposit_capture(archive, S, url, _capture(url, b"<p>libellous edition</p>"), warn=warned.append)
        assert warned == []
        again = rewrapped(_capture(url, b"<p>libellous edition</p>"))
        assert deposit_capture(archive, S, url, again, warn=warned.append).names == (name.with_version(3),)
        (said,) = warned
        assert said.startswith(f"{name} was withdrawn at "), said
        assert "its octets purged" in said and "could not be compared" in said, said
        assert f"deposited as {name.with_version(3)}" in said, said
        # a forced capture asks for no comparison, and is told of none
        warned.clear()
        forced = rewrapped(_capture(url, b"<p>libellous edition</p>"), b"Wed, 02 Oct 2024 10:00:00 +0000")
        assert deposit_capture(archive, S, url, forced, force=True, warn=warned.append).names == (
            name.with_version(4),)
        assert warned == []


@pytest.mark.usefixtures("one_gmt_day")
def test_an_earlier_withdrawn_page_kept_and_compared_warns_of_nothing(server: str, location: str) -> None:
    # version 1 withdrawn, its octets kept: compared with each later capture (another page), nothing to warn of
    url = f"{server}/page.html"
    with Archive.init(location) as archive:
        archive.add_series(S)
        (name,) = deposit_capture(archive, S, url, _capture(url, b"<p>one</p>"))
        archive.withdraw(name, "by order")  # kept: compared, and not alike
        warned: list[str] = []
        deposit_capture(archive, S, url, _capture(url, b"<p>two</p>"), warn=warned.append)
        deposit_capture(archive, S, url, _capture(url, b"<p>three</p>"), warn=warned.append)
        assert warned == []


@pytest.mark.usefixtures("one_gmt_day")
def test_only_the_last_twenty_withdrawn_versions_are_compared_by_their_parts(server: str, tmp_path: Path) -> None:
    url = f"{server}/page.html"
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        (name,) = deposit_capture(archive, S, url, _capture(url, b"<p>edition 0</p>"))
        archive.withdraw(name, "the oldest, by order")
        for n in range(1, 21):  # twenty more withdrawn versions after it, and one in service
            (later,) = deposit_capture(archive, S, url, _capture(url, f"<p>edition {n}</p>".encode()))
            archive.withdraw(later, f"withdrawn {n}")
        deposit_capture(archive, S, url, _capture(url, b"<p>in service</p>"))
        # the twentieth withdrawn version back (edition 1) is compared: refused in another wrapper
        with pytest.raises(ImmutabilityError) as refused:
            deposit_capture(archive, S, url, rewrapped(_capture(url, b"<p>edition 1</p>")))
        said = str(refused.value)
        assert f"{name.with_version(2)} holds" in said and "reason: withdrawn 1;" in said, said
        # the twenty-first back: its very octets are refused whatever the history's length (by the catalog) ...
        with pytest.raises(ImmutabilityError) as exact:
            deposit_capture(archive, S, url, _capture(url, b"<p>edition 0</p>"))
        said = str(exact.value)
        assert f"{name} holds" in said and "reason: the oldest, by order;" in said, said
        assert archive.versions(name) == list(range(1, 23))
        # ... but it is past the bound of the comparison by parts: in another wrapper it is the next version, and
        # the deposit says which withdrawn version was not compared, and why
        again = rewrapped(_capture(url, b"<p>edition 0</p>"))
        warned: list[str] = []
        assert deposit_capture(archive, S, url, again, warn=warned.append).names == (name.with_version(23),)
        (said,) = warned
        assert said.startswith(f"1 earlier withdrawn version ({name}) was not compared with this capture of {url}"), said
        assert "the last 20 withdrawn versions whose octets are kept" in said, said
        assert f"deposited as {name.with_version(23)}" in said, said
