"""A request giving ``Authorization`` (or ``Idempotency-Key``) in more than one field is refused, not read by its first.

RFC 9110 §5.3: a sender does not give a field that is not a list in more
than one field line; RFC 6750 §3.1 answers a request that presents more
than one token ``400`` with ``error="invalid_request"``. Read by its first
field, the request was written (or read) as whichever token came first,
while a proxy or a log that read the last saw another writer. The archive
is compared whole before and after.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import WriteArchive

from pdi.archive import Archive

S = "library.example.us"
OTHER = "other.example.us"


class Twice(WriteArchive):
    def __init__(self, location: Path) -> None:
        super().__init__(location, (S, OTHER), ("mine", "theirs"))
        self.mine, self.theirs = self.tokens[S], self.tokens[OTHER]


@pytest.fixture
def twice(tmp_path: Path) -> Iterator[Twice]:
    made = Twice(tmp_path / "archive")
    try:
        yield made
    finally:
        made.archive.close()


def _deposit(twice: Twice, fields: list[tuple[str, str]]) -> httpx.Response:
    return twice.client.post(f"/api/deposit?series={S}&format=text", content=b"sent once\n",
                             headers=[("Content-Type", "text/plain"), *fields])


@pytest.mark.parametrize("order", ["mine first", "theirs first", "the same twice"])
def test_two_authorization_fields_are_400_invalid_request_and_nothing_is_written(twice: Twice, order: str) -> None:
    tokens = {"mine first": [twice.mine, twice.theirs], "theirs first": [twice.theirs, twice.mine],
              "the same twice": [twice.mine, twice.mine]}[order]
    before = twice.snapshot()
    answer = _deposit(twice, [("Authorization", f"Bearer {t}") for t in tokens])
    assert answer.status_code == 400, answer.text
    assert answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="invalid_request"'
    assert answer.json()["detail"].startswith("the request gives Authorization 2 times"), answer.text
    assert twice.snapshot() == before


def test_a_read_with_two_authorization_fields_is_400_too(twice: Twice) -> None:
    answer = twice.client.get("/api/series", headers=[("Authorization", f"Bearer {twice.mine}"),
                                                      ("Authorization", f"Bearer {twice.theirs}")])
    assert answer.status_code == 400 and "Authorization 2 times" in answer.json()["detail"], answer.text
    assert twice.client.get("/api/series", headers={"Authorization": f"Bearer {twice.mine}"}).status_code == 200


@pytest.mark.parametrize("route", [f"/api/deposit?series={S}&format=text", f"/api/batch?series={S}"])
def test_two_idempotency_key_fields_are_400_naming_the_field_and_nothing_is_written(twice: Twice, route: str) -> None:
    # the draft's Idempotency-Key is one Structured Fields string: two fields (combined "a, b") are no one key;
    # read by the first, a retry sending them the other way round minted a second name
    before = twice.snapshot()
    for keys in (["night-1", "night-2"], ["night-2", "night-1"]):
        fields = [("Authorization", f"Bearer {twice.mine}"), *(("Idempotency-Key", k) for k in keys)]
        if route.startswith("/api/batch"):
            answer = twice.client.post(route, files=[("item", ("a.txt", b"sent once\n", "text/plain"))],
                                       headers=fields)
        else:
            answer = _deposit(twice, fields)
        assert answer.status_code == 400, answer.text
        assert answer.json()["detail"].startswith("Idempotency-Key is given 2 times: give one key"), answer.text
    assert twice.snapshot() == before


@pytest.mark.parametrize("route", [f"/api/deposit?series={S}", f"/api/deposit?series={S}&format=text",
                                   f"/api/batch?series={S}"])
def test_two_content_type_fields_are_400_naming_both_and_nothing_is_written(twice: Twice, route: str) -> None:
    # which of two media types a body is in decides its format and charset, kept for good: read by the first,
    # a body a proxy or a log read as HTML was deposited as text
    before = twice.snapshot()
    answer = twice.client.post(route, content=b"<p>sent once\n",
                               headers=[("Authorization", f"Bearer {twice.mine}"), ("Content-Type", "text/plain"),
                                        ("Content-Type", "text/html")])
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"].startswith("the request gives Content-Type 2 times ('text/plain', 'text/html')")
    assert twice.snapshot() == before


@pytest.mark.parametrize("route", [f"/api/deposit?series={S}&format=text", f"/api/batch?series={S}"])
def test_a_token_revoked_while_its_body_comes_writes_nothing(twice: Twice, tmp_path: Path, route: str) -> None:
    # pdi token revoke: "at once and for good": a deposit whose token was revoked before it was written is refused
    batch = route.startswith("/api/batch")
    head = (b'--b0undary\r\nContent-Disposition: form-data; name="item"; filename="a.txt"\r\n'
            b"Content-Type: text/plain\r\n\r\n") if batch else b""
    tail = b"\r\n--b0undary--\r\n" if batch else b""
    before = twice.snapshot()

    def body() -> Iterator[bytes]:
        yield head + b"first half\n"
        with Archive.open(tmp_path / "archive") as elsewhere:  # the command line, while the body comes
            elsewhere.revoke_token("mine")
        yield b"second half\n" + tail

    kind = "multipart/form-data; boundary=b0undary" if batch else "text/plain"
    answer = twice.client.post(route, content=body(),
                               headers={"Authorization": f"Bearer {twice.mine}", "Content-Type": kind})
    assert answer.status_code == 403, answer.text
    assert "was revoked" in answer.json()["detail"] and "nothing was written" in answer.json()["detail"]
    after = twice.snapshot()
    assert isinstance(after, tuple) and isinstance(before, tuple)
    assert after[:2] == before[:2]  # no representation, no blob
    assert [e for e in after[2] if e[0] != "token-revoke"] == before[2]  # and no audit entry but the revocation


@pytest.mark.parametrize("separator", ["\t", "\t ", "\x0b"])
def test_bearer_and_its_token_parted_by_a_tab_is_400_saying_so_not_another_scheme(twice: Twice, separator: str) -> None:
    # RFC 9110 §11.4: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]: one or more spaces, no tab;
    # the request said Bearer, and was told it had given "another scheme"
    before = twice.snapshot()
    for answer in (_deposit(twice, [("Authorization", f"Bearer{separator}{twice.mine}")]),
                   twice.client.get("/api/series", headers={"Authorization": f"Bearer{separator}{twice.mine}"})):
        assert answer.status_code == 400, answer.text
        assert answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="invalid_request"'
        detail = answer.json()["detail"]
        assert detail.startswith("Authorization: Bearer is parted from its token by a space (RFC 9110 §11.4)"), detail
        assert twice.mine not in detail
    assert twice.snapshot() == before


def test_a_mirror_announcement_naming_a_member_twice_is_400_naming_it(twice: Twice) -> None:
    # RFC 8259 §4: names within an object SHOULD be unique; read by its last, the series announced was another
    # than a reader (or a log) taking the first saw
    _, token = twice.archive.add_token("mirror-b", role="mirror", series=[S])
    before = twice.archive.mirrors(S), twice.archive.mirrors(OTHER)
    answer = twice.client.post(
        "/api/mirrors", content=b'{"series": "%s", "series": "%s", "base_url": "https://b.example.org",'
        b' "keys": {"keys": []}}' % (S.encode(), OTHER.encode()),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert 'names its member "series" twice' in answer.json()["detail"], answer.text
    assert (twice.archive.mirrors(S), twice.archive.mirrors(OTHER)) == before
