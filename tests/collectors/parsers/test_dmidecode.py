"""dmidecode -t memory: DIMMs with socket and channel from vendor slot names."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.dmidecode import parse_dmidecode_memory, slot_position
from collectors.transcript import kind_for_command
from tests.collectors.parsers.lookup import detect
from tests.collectors.parsers.machine import paste, run
from tests.conftest import FIXTURES

PUBLISHED = FIXTURES / "commands"


def test_dell_r520_full_dmidecode(corpus):
    text = (corpus / "pt-summary" / "007" / "dmidecode").read_text()
    dimms = parse_dmidecode_memory(text).dimms
    assert len(dimms) == 12
    assert [d.locator for d in dimms[:2]] == ["DIMM_A1", "DIMM_A2"]
    assert {d.socket for d in dimms if d.locator.startswith("DIMM_A")} == {1}
    assert {d.socket for d in dimms if d.locator.startswith("DIMM_B")} == {2}
    assert all(d.channel is None for d in dimms)  # Dell names the processor, not the channel
    assert {(d.size_mb, d.type, d.speed_mts, d.configured_speed_mts) for d in dimms} == {
        (16384, "DDR3", 1333, 1333)
    }
    assert detect(text).kind == "dmidecode_memory"


def test_dell_letter_slots_with_empty_slots():
    text = (PUBLISHED / "dmidecode_dell_b1-b6.txt").read_text()
    dimms = parse_dmidecode_memory(text).dimms
    assert [d.locator for d in dimms] == ["B1", "B2", "B3", "B4", "B5", "B6"]
    assert [d.size_mb for d in dimms] == [32768, 32768, None, 32768, 32768, None]
    assert {d.socket for d in dimms} == {2}
    assert dimms[0].speed_mts == 3200 and dimms[0].configured_speed_mts == 2666
    assert dimms[2].type is None and dimms[2].speed_mts is None
    assert dimms[0].line == 2  # the "Memory Device" line


def test_supermicro_locator_and_bank():
    text = (PUBLISHED / "dmidecode_supermicro_p1-dimma1.txt").read_text()
    (dimm,) = parse_dmidecode_memory(text).dimms  # the Physical Memory Array is skipped
    assert (dimm.locator, dimm.bank) == ("P1-DIMMA1", "P0_Node0_Channel0_Dimm0")
    assert (dimm.socket, dimm.channel) == (1, "A")
    assert dimm.size_mb == 8192 and dimm.configured_speed_mts == 2666  # "Configured Clock Speed"


@pytest.mark.parametrize(
    ("locator", "bank", "expected"),
    [
        ("A1", None, (1, None)),  # Dell
        ("B12", "Not Specified", (2, None)),
        ("DIMM_B1", None, (2, None)),
        ("PROC 2 DIMM 3", None, (2, None)),  # HPE
        ("P1-DIMMA1", "P0_Node0_Channel0_Dimm0", (1, "A")),  # Supermicro dual socket
        ("DIMMA1", "P0_Node0_Channel0_Dimm0", (0, "0")),  # Supermicro single socket
        ("CPU1_DIMM_A0", None, (1, "A")),  # Lenovo / Intel
        ("CPU0_C1D0", None, (0, "1")),  # Inspur
        ("DIMM010", None, (0, "1")),  # Huawei
        ("DIMM000", "SOCKET 0 CHANNEL 0 DIMM 0", (0, "0")),
        ("DIMM_A1", "NODE 1", (1, "A")),  # Intel server boards: the bank names the socket
        ("DIMM-A", "P0 CHANNEL A", (0, "A")),  # AMD boards
        ("DIMM 1", None, (None, None)),  # nothing to tell
        ("ChannelA-DIMM0", "BANK 0", (None, None)),
    ],
)
def test_slot_naming(locator, bank, expected):
    assert slot_position(locator, bank) == expected


def test_this_machine_without_smbios():
    out = run("dmidecode -t memory 2>&1", tool="dmidecode")
    result = parse_dmidecode_memory(out)
    if "/dev/mem" in out or "No SMBIOS" in out:
        assert result.dimms == [] and "no_dmi" in result.lines
    else:  # a machine with SMBIOS: every record has a locator
        assert result.dimms and all(d.locator for d in result.dimms)


def test_commands_and_transcript():
    for command in ("dmidecode -t memory", "sudo dmidecode -t 17", "dmidecode --type memory"):
        assert kind_for_command(command) == "dmidecode_memory", command
    text = (PUBLISHED / "dmidecode_dell_b1-b6.txt").read_text()
    host = paste(("dmidecode -t memory", text))
    assert not host.errors, host.errors
    assert len(host.memory_devices.dimms) == 6
    assert host.memory_devices.dimms[0].line == 3  # prompt line 1, Handle line 2


def test_not_dmidecode():
    with pytest.raises(ParseError):
        parse_dmidecode_memory("Size: 16 GB\n")


def test_full_dmidecode_pasted_after_a_prompt(corpus):
    # a whole dump is cut into many pieces by its record titles ("BIOS Information"):
    # the pieces without memory records give nothing, the DIMMs of all pieces are joined
    text = (corpus / "pt-summary" / "007" / "dmidecode").read_text()
    host = paste(("dmidecode", text))
    assert not host.errors, host.errors[:3]
    dimms = host.memory_devices.dimms
    assert len(dimms) == 12 and {d.socket for d in dimms} == {1, 2}
    lines = ("[root@db01 ~]# dmidecode\n" + text).splitlines()
    assert all(lines[d.line - 1].strip() == "Memory Device" for d in dimms)
