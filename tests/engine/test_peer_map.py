"""The peer map in docs/rules.md names only registered rules, and every new
host-side rule names its peer equivalent."""

from __future__ import annotations

from engine.peer_map import PEER_MAP
from engine.rules import load_all


def test_peer_map_names_registered_rules():
    registry = load_all()
    named = {r.strip() for _peer, _check, ours, _note in PEER_MAP for r in ours.split(",") if r.strip()}
    assert named - set(registry) == set()


def test_every_check_has_a_rule_or_a_reason():
    for peer, check, ours, note in PEER_MAP:
        assert ours or note, (peer, check)


def test_host_side_rules_name_their_peer():
    registry = load_all()
    for module in ("engine.rules.thp", "engine.rules.vm_policy"):
        for spec in registry.values():
            if spec.func.__module__ == module:
                assert spec.peer, spec.id
