"""Fleet playbooks: one rule's changes for the hosts a reader selects on the
rule page, as one playbook with an inventory group per host
(``engine.remedies.playbook.render_fleet_playbook``). Host-level changes only
(sysctl.d, my.cnf, tc, IRQ affinity ...): a guest's domain patch stays on its
own report, since it is applied on that guest's hypervisor."""

from __future__ import annotations

from django.http import Http404

from engine.remedies import RemedyResult
from engine.rules import load_all
from triage import fleetview, selectors
from triage.models import Snapshot

MAX_HOSTS = 500


def selected_hosts(user, rule_id: str, snapshot_ids: list[str]) -> list[tuple[str, list[RemedyResult]]]:
    """``(host name, remedies of rule_id)`` for each selected snapshot that the
    user may see and whose newest analysis has the finding (404 for an unknown
    rule or a selection with none)."""
    if rule_id not in load_all():
        raise Http404("no such rule")
    ids = sorted({int(i) for i in snapshot_ids if str(i).isdigit()})[:MAX_HOSTS]
    visible = selectors.visible_snapshots(user)
    affected = fleetview.affected_snapshots(visible, rule_id).filter(pk__in=ids).values_list("pk", flat=True)
    # whole rows: the remedies are filled from the stored facts
    snapshots = Snapshot.objects.filter(pk__in=list(affected)).order_by("host_key", "pk")
    per_host = [(snap.host_key or snap.label, selectors.host_remedies(snap, {rule_id})) for snap in snapshots]
    if not per_host:
        raise Http404("none of the selected hosts has this finding")
    return per_host


def file_stem(rule_id: str) -> str:
    return "casebook-" + rule_id.replace(".", "-").replace("_", "-")
