"""The Chinese catalogue translates every UI string it holds: no entry with an
empty ``msgstr`` and no fuzzy entry (a guess ``makemessages`` left for a
changed string), except the names that stay as they are (product, command and
unit names). Pages that show an English string not in the catalogue at all are
``tests/test_ui_translated.py``'s concern."""

from __future__ import annotations

import re

from tests.conftest import ROOT

CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
# msgids that are names, identical in Chinese (an empty msgstr would do too, but
# the catalogue states it): none today; add with the reason.
NAMES: set[str] = set()


def _unquote(lines: list[str]) -> str:
    return "".join(re.sub(r'^"|"$', "", line.strip()) for line in lines)


def entries() -> list[dict]:
    """The catalogue's entries: ``msgid``, ``msgstr`` (each plural form), flags."""
    out = []
    for block in CATALOGUE.read_text(encoding="utf-8").split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith("#~")]
        flags = " ".join(line for line in lines if line.startswith("#,"))
        fields: dict[str, list[str]] = {}
        current = None
        for line in lines:
            match = re.match(r"^(msgid|msgid_plural|msgstr(?:\[\d\])?|msgctxt) (\".*\")$", line)
            if match:
                current = match.group(1)
                fields[current] = [match.group(2)]
            elif line.startswith('"') and current:
                fields[current].append(line)
        if "msgid" not in fields:
            continue
        msgid = _unquote(fields["msgid"])
        if not msgid:  # the header
            continue
        strs = [_unquote(v) for k, v in fields.items() if k.startswith("msgstr")]
        out.append({"msgid": msgid, "msgstr": strs, "fuzzy": "fuzzy" in flags})
    return out


def test_the_catalogue_has_entries():
    assert len(entries()) > 500


def test_every_msgid_is_translated_and_none_is_fuzzy():
    missing = [e["msgid"] for e in entries() if e["msgid"] not in NAMES and (not all(e["msgstr"]) or e["fuzzy"])]
    assert not missing, f"{len(missing)} untranslated or fuzzy: {missing[:20]}"
