"""A mirror's own withdrawals hold against its origin: ``pdi mirror sync`` copies no new format of a version, and no
new version of a document withdrawn whole, that the mirror's operator withdrew (a court's order where the mirror
is, say), and one such name does not stop the sync.

Two real archives on loopback, as ``tests/server/test_server_mirrors.py``: A (the origin of ``S``, served by
``pdi serve``) and B (its mirror). What the operator expects is worked out from the rule a deposit follows on B
itself (a format added to a version withdrawn there is refused): the sync leaves each such name out with a line
in its report and in the audit log, keeps every other new name, and ends whole (exit 0, the sync recorded).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_server_mirrors import BYTES, S, mirror, origin, pdi, serving

from pdi.archive import Archive, Content
from pdi.errors import WithdrawnError
from pdi.network import mirrors


def test_a_sync_copies_nothing_new_into_what_the_mirror_withdrew_and_goes_on_with_the_rest(tmp_path: Path) -> None:
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        # B's operator withdraws the text's version 1, and the page's document whole; A goes on depositing
        with Archive.open(b) as ours:
            ours.withdraw(names["text"], "court order 12/345 (here only)")
            ours.withdraw(names["page"].rsplit(".", 2)[0], "court order 12/346 (here only)")
            ours.withdraw(names["large"], "court order 12/348 (here only)")
        with Archive.open(a) as theirs:
            added_format = str(theirs.add_format(names["text"], b"<p>the minutes</p>\n", format="html"))
            new_version = str(theirs.add_version(names["page"], [Content(b"<p>Item two.</p>\n", "html")])[0])
            # the same octets again as a new version (forced there): they would serve here under another name
            again = str(theirs.add_version(names["large"], [Content(BYTES["large"], "octet-stream")], force=True)[0])
            new_text = b"a later text, nothing withdrawn about it\n"
            new_name = str(theirs.add(S, new_text, format="text"))
        code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0, out  # not "integrity check failed": the operator's own withdrawals are no problem
    lines = [line for line in out.splitlines() if line.startswith("withdrawn-here\t")]
    assert len(lines) == 3, out
    said = dict(line.split("\t")[1:] for line in lines)
    assert said.keys() == {added_format, new_version, again}
    assert said[added_format].startswith(f"new at {a_url}, but its version 1 was withdrawn here at ")
    assert "(reason: court order 12/345 (here only)): not copied" in said[added_format]
    assert said[new_version].startswith(f"new at {a_url}, but its document was withdrawn whole here at ")
    assert said[again].startswith(f"new at {a_url}, but version 1 of its document, withdrawn here, holds its octets")
    assert f"{S}\tfrom {a_url}: 7 names listed, 1 new (" in out, out
    assert "3 not copied (withdrawn here)" in out and "0 problems" in out, out
    with Archive.open(b) as ours:  # B kept the rest and nothing of the two
        assert ours.digests_held([new_name, added_format, new_version, again]) == [
            hashlib.sha256(new_text).hexdigest(), None, None, None]
        audit = ours.audit(limit=10_000)
        withheld = [entry for entry in audit if entry.action == "mirror-withheld"]
        assert len(withheld) == 1 and withheld[0].subject == S
        assert withheld[0].detail.startswith(f"from {a_url}: 3 new names of versions withdrawn here not copied: ")
        assert added_format in withheld[0].detail and new_version in withheld[0].detail
        synced = [entry for entry in audit if entry.action == "mirror-sync"]
        assert len(synced) == 2 and synced[-1].detail.endswith(", 3 withheld (withdrawn here)")  # ended whole
        # the withdrawn names still answer with their tombstones; a deposit of the same would be refused too
        with pytest.raises(WithdrawnError):
            ours.get(names["text"])


def test_a_version_withdrawn_while_the_sync_fetched_it_is_left_out_as_its_batch_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mirror's operator withdraws a version after the sync looked its new names up and before it keeps them:
    looked up again as the batch is kept, its new format is left out, the batch's other names kept."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
        with Archive.open(a) as theirs:
            added_format = str(theirs.add_format(names["text"], b"<p>the minutes</p>\n", format="html"))
            new_name = str(theirs.add(S, b"another text\n", format="text"))
        real = mirrors._keep

        def withdrawn_meanwhile(archive: Archive, *args: object, **kwargs: object) -> None:
            if archive.withdrawn_here(names["text"]) is None:
                archive.withdraw(names["text"], "court order 12/347 (here only)")
            real(archive, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(mirrors, "_keep", withdrawn_meanwhile)
        code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0, out
    assert f"withdrawn-here\t{added_format}\tnew at {a_url}, but its version 1 was withdrawn here at " in out, out
    assert "1 new (" in out and "1 not copied (withdrawn here)" in out, out
    with Archive.open(b) as ours:
        assert ours.digests_held([added_format])[0] is None and ours.digests_held([new_name])[0] is not None
