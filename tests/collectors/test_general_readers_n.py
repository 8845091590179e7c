"""Readers of the fix made after issue 26's blind round N, each on the real output
that needed it (sources in tests/fixtures/published/README.md, ``roundn/``): an
author's label between a command and its output, a Redis warning wrapped out of its
quote, a sentence holding a Markdown link."""

from __future__ import annotations

from collectors.archive import load
from collectors.facts import SnapshotFacts
from collectors.transcript import line_class
from engine.run import analyze
from tests.conftest import FIXTURES

ROUND_N = FIXTURES / "published" / "roundn"


def _rules(name: str) -> dict[str, str]:
    host = load(ROUND_N / name, split=False).host
    return {f.rule: f.severity for f in analyze(SnapshotFacts(hosts=[host])).findings}


def test_a_sample_output_label_between_a_command_and_its_output_is_prose():
    """jackydalong (round N 1801): ``# cat /sys/block/sda/queue/scheduler``, then
    ``Sample output:``, then ``noop anticipatory deadline [cfq]``."""
    host = load(ROUND_N / "jackydalong-scheduler-sample-output.txt", split=False).host
    assert host.io_schedulers.active == {"sda": "cfq"}
    assert host.reading.unrecognised_lines == 0
    assert _rules("jackydalong-scheduler-sample-output.txt")["disk.io_scheduler"] == "info"


def test_a_redis_warning_wrapped_out_of_its_quote_is_read_whole():
    """unbound issue 101 (round N 1818): ``> WARNING: The TCP backlog setting of 511
    cannot be enforced because`` and, without the quote marker, the line that names
    somaxconn's value."""
    host = load(ROUND_N / "unbound-101-redis-backlog-warning-wrapped-quote.txt", split=False).host
    (service,) = host.services
    assert [(w.code, w.value) for w in service.warnings] == [("somaxconn", "128")]
    assert "net.somaxconn_low" in _rules("unbound-101-redis-backlog-warning-wrapped-quote.txt")


def test_a_sentence_holding_a_markdown_link_is_prose():
    line = (ROUND_N / "unbound-101-redis-backlog-warning-wrapped-quote.txt").read_text().splitlines()[0]
    assert line.startswith("After installing [Redis](https://redis.io/)")
    assert line_class(line) == "prose"


def test_a_prompt_whose_user_and_host_a_web_page_hid_is_still_a_prompt():
    """e-com-net (round N 1807): ``[[email protected] ~]#lscpu Architecture: x86_64 ...``:
    Cloudflare's e-mail protection replaced ``root@host``, and the page lost the output's
    line breaks. The flattened lscpu of the 4-socket KVM guest is read again."""
    name = "ecomnet-kvm-guest-lscpu-flattened-hidden-address-zh.txt"
    host = load(ROUND_N / name, split=False).host
    assert (host.cpu.sockets, host.cpu.cores_per_socket, host.cpu.hypervisor_vendor) == (4, 1, "KVM")
    assert host.reading.unrecognised_lines == 0
    rules = _rules(name)
    assert rules["kvm.flat_socket_topology"] == "warning"
    assert rules["kvm.cpu_model_hides_cache"] == "warning"
