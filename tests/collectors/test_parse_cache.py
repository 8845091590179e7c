"""One parse per text and kind (``collectors.parsers.parse_cache``): inside one
artifact a parser does not read the very same text twice, and what the
callers get is what parsing again would have given them, each call its own
copy. The inputs are real outputs of the shared corpus and the seeds."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest

from collectors import archive, parsers
from collectors.facts import ParseError
from collectors.parsers import ParserSpec
from tests.conftest import CORPUS, FIXTURES

LSCPU = (CORPUS / "lscpu" / "insights-core_test_lscpu_LSCPU_1.txt").read_text()
DOMAIN = (CORPUS / "libvirt" / "insights-core_test_qemu_xml_XML_NUMA.txt").read_text()
NUMACTL = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


@pytest.fixture
def counted():
    """The real lscpu, libvirt and numactl parsers, counting their calls."""
    parsers.load_all()
    calls: list[str] = []

    def spec(kind: str) -> ParserSpec:
        real = parsers.REGISTRY[kind]

        def func(text: str, **kwargs):
            calls.append(kind)
            return real.func(text, **kwargs)

        return dataclasses.replace(real, func=func)

    return calls, spec("lscpu"), spec("libvirt_domain"), spec("numactl_hardware")


def test_the_same_text_is_parsed_once_and_each_caller_gets_its_own_copy(counted):
    calls, lscpu, _domain, _numactl = counted
    with parsers.parse_cache():
        first = parsers.parse(lscpu, LSCPU)
        first.cpus, first.source.line = -1, 99  # a caller stamps its copy
        second = parsers.parse(lscpu, LSCPU)
        third = parsers.parse(lscpu, LSCPU)
    assert calls == ["lscpu"]
    assert second == third == parsers.REGISTRY["lscpu"].func(LSCPU)
    assert second is not third and second.source is not third.source
    assert second.cpus != -1 and second.source.line != 99


def test_a_parse_error_is_replayed_with_its_partial_result(counted):
    calls, _lscpu, _domain, numactl = counted
    cut = "\n".join(NUMACTL.split("\n")[:9])  # the distance table cut after its header
    with pytest.raises(ParseError) as plain:
        parsers.REGISTRY["numactl_hardware"].func(cut)
    assert plain.value.partial is not None
    raised, stamped = [], []
    with parsers.parse_cache():
        for _ in range(2):
            with pytest.raises(ParseError) as exc:
                parsers.parse(numactl, cut)
            raised.append(exc.value)
            stamped.append(exc.value.partial.source.line)
            exc.value.partial.source.line = 99  # a caller stamps its copy
    assert calls == ["numactl_hardware"]
    assert stamped == [plain.value.partial.source.line] * 2
    for exc in raised:
        assert (exc.message, exc.line) == (plain.value.message, plain.value.line)
        exc.partial.source.line = plain.value.partial.source.line
        assert exc.partial == plain.value.partial
    assert raised[0].partial is not raised[1].partial


def test_other_texts_kinds_and_arguments_are_parsed_anew(counted):
    calls, lscpu, domain, _numactl = counted

    def fields(text: str, sep: str | None = None) -> list[str]:  # a test-only parser with an argument
        calls.append(f"fields {sep}")
        return text.split(sep)

    split = ParserSpec(kind="test_fields", func=fields)
    with parsers.parse_cache():
        parsers.parse(lscpu, LSCPU)
        parsers.parse(lscpu, LSCPU + "\n")
        parsers.parse(domain, DOMAIN)
        assert parsers.parse(split, "a b,c") == ["a", "b,c"]
        assert parsers.parse(split, "a b,c", sep=",") == ["a b", "c"]
        assert parsers.parse(split, "a b,c", sep=",") == ["a b", "c"]
    assert calls == ["lscpu", "lscpu", "libvirt_domain", "fields None", "fields ,"]


def test_no_cache_outside_the_block(counted):
    calls, lscpu, _domain, _numactl = counted
    with parsers.parse_cache():
        parsers.parse(lscpu, LSCPU)
    parsers.parse(lscpu, LSCPU)
    parsers.parse(lscpu, LSCPU)
    assert calls == ["lscpu"] * 3


def test_a_paste_reads_the_same_with_and_without_the_cache(monkeypatch):
    """The seed's KVM host and its guest, each output pasted a second time under
    a prompt of another host: every host's facts and reading as without the cache."""
    host = (ZSTACK / "zstack-9.txt").read_text()
    guest = (ZSTACK / "infoplus-db.txt").read_text()
    paste = "\n".join([host, guest, host.replace("zstack-9", "zstack-10"), guest]).encode()
    cached = archive.load(paste, name="session.txt")
    monkeypatch.setattr(parsers, "parse_cache", contextlib.nullcontext)
    plain = archive.load(paste, name="session.txt")
    assert len(cached.hosts) >= 3
    assert repr(cached) == repr(plain)
