"""An SGML filing whose third element is another with its DTD than without it, and onsgmls run by hand on it.

The passages are worked out by hand from onsgmls's element events (``onsgmls -E0``) and the rules of
docs/reference/fragments.md (an explicit tag stands where the source has it; an omitted end tag ends where what
made the parser close it begins): element 3 is CITE without the DTD (no tag inferred), PARA with it (BODY, whose
start tag is omissible, implied before it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PUBLIC = "-//ACME//DTD Filing//EN"
# CAPTION and PARA end tags omissible, BODY's start and end tags both (ISO 8879 §11.2.2)
FILING_DTD = """<!ELEMENT filing  - - (caption, body)>
<!ELEMENT caption - O (#PCDATA)>
<!ELEMENT body    O O (para+)>
<!ELEMENT para    - O (#PCDATA | cite)*>
<!ELEMENT cite    - - (#PCDATA)>
"""
FILING = f"""<!DOCTYPE filing PUBLIC "{PUBLIC}">
<filing>
<caption>Acme v. Roadrunner
<para>First <cite>one</cite> para
<para>Second
</filing>
"""
WITHOUT_DTD = b"<cite>one</cite>"
WITH_DTD = b"<para>First <cite>one</cite> para\r\n"


def names_by_hand(document: Path, catalog: Path | None) -> list[str]:
    """The elements onsgmls reports in ``document``, in order, run by hand (with ``catalog``, else the machine's)."""
    command = ["onsgmls", "-E0"] + (["-c", str(catalog)] if catalog else []) + [str(document)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False,
                         env={"PATH": os.environ["PATH"], "SGML_CATALOG_FILES": "/etc/sgml/catalog"})
    return [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]


def check_by_hand(folder: Path) -> None:
    """Check, by onsgmls run by hand in ``folder``, what element 3 of FILING is without its DTD and with it."""
    hand, dtds = folder / "by-hand", folder / "by-hand-dtds"  # (onsgmls reads a catalog beside the document)
    hand.mkdir()
    dtds.mkdir()
    (hand / "filing.sgml").write_text(FILING, encoding="ascii")
    (dtds / "filing.dtd").write_text(FILING_DTD, encoding="ascii")
    (dtds / "catalog").write_text(f'PUBLIC "{PUBLIC}" "filing.dtd"\n', encoding="ascii")
    assert names_by_hand(hand / "filing.sgml", None)[3] == "CITE"
    assert names_by_hand(hand / "filing.sgml", dtds / "catalog")[3] == "PARA"


def add_dtd(folder: Path, location: str) -> None:
    """``pdi sgml add`` of FILING's DTD (written in ``folder``) to the archive at ``location``."""
    from click.testing import CliRunner

    from pdi.cli import cli

    dtd = folder / "filing.dtd"
    dtd.write_text(FILING_DTD, encoding="ascii")
    added = CliRunner().invoke(cli, ["sgml", "add", str(dtd), "--public-id", PUBLIC, "--archive", location])
    assert added.exit_code == 0, added.output
