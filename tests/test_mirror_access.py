"""The pure parts of :mod:`pdi.network.mirror_access`: a manifest entry's embargo, and where a token is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from pdi.errors import AccessError, LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.network.mirror_access import (
    MAX_TOKEN,
    describe_source,
    entry_embargo,
    read_token,
    token_source,
)

UNTIL = "2031-01-01T00:00:00.000000Z"


def test_an_entry_says_its_documents_and_its_versions_embargo() -> None:
    assert entry_embargo({"name": "n"}) == (None, None)
    assert entry_embargo({"embargo": {"version": UNTIL}}) == (None, UNTIL)
    assert entry_embargo({"embargo": {"document": UNTIL, "version": UNTIL}}) == (UNTIL, UNTIL)


@pytest.mark.parametrize(("said", "says"), [
    ("2031-01-01", "is not {"),
    ({"documents": UNTIL}, "is not {"),
    ({"version": "2031-01-01"}, "version's embargo '2031-01-01' is not a catalog timestamp"),
    ({"document": "2031-01-01T00:00:00.000000+01:00"}, "document's embargo"),
    ({"version": 20310101}, "is not a catalog timestamp"),
])
def test_an_embargo_of_another_shape_is_refused_saying_what(said: object, says: str) -> None:
    with pytest.raises(ParseError) as caught:
        entry_embargo({"embargo": said})
    assert says in str(caught.value)


def test_a_token_file_is_the_owners_alone_and_holds_one_bearer_token(tmp_path: Path) -> None:
    kept = tmp_path / "token"
    kept.write_text("pdi_abc-DEF_123\n")
    kept.chmod(0o600)
    source = token_source(str(kept), None)
    assert source == f"file:{kept}" and describe_source(source) == f"the file {kept}"
    assert read_token(source) == "pdi_abc-DEF_123"
    kept.chmod(0o640)
    with pytest.raises(AccessError, match="chmod 600"):
        read_token(source)
    kept.chmod(0o600)
    kept.write_text("pdi_abc\r\nX-Injected: yes\n")  # a header of its own would ride along: refused
    with pytest.raises(ParseError, match="does not hold a bearer token") as caught:
        read_token(source)
    assert "Injected" not in str(caught.value)
    kept.write_text("x" * (MAX_TOKEN + 1))
    with pytest.raises(LimitError):
        read_token(source)
    with pytest.raises(NotFoundError, match="no token file"):
        read_token(f"file:{tmp_path / 'none'}")


def test_a_token_in_the_environment_is_named_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDI_MIRROR_TOKEN", "pdi_secret")
    assert token_source(None, "PDI_MIRROR_TOKEN") == "env:PDI_MIRROR_TOKEN"
    assert describe_source("env:PDI_MIRROR_TOKEN") == "$PDI_MIRROR_TOKEN"
    with pytest.raises(ParseError, match="not an environment variable"):
        token_source(None, "A-B")
    with pytest.raises(UnsupportedError, match="not both"):
        token_source("f", "PDI_MIRROR_TOKEN")
    assert token_source(None, None) is None
    monkeypatch.delenv("PDI_MIRROR_TOKEN")
    with pytest.raises(NotFoundError, match=r"\$PDI_MIRROR_TOKEN holds no token"):
        read_token("env:PDI_MIRROR_TOKEN")
