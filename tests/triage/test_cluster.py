"""Cluster comparison (issue 8 B) on seed 001's Kunpeng cluster, all 18 hosts.

The hosts are generated from the rebuilt seed transcripts
(tests/fixtures/seeds/kunpeng-stream-zone-reclaim/before/): gp-sdw01 is a
healthy host, gp-sdw03 one that ran STREAM after the disk test filled its page
cache. Each generated host gets its own hostname and slightly different STREAM
figures; three are turned into NUMA-off machines (firmware node interleaving:
one node with both sockets' CPUs and memory) by rewriting lscpu, numactl -H,
node meminfo and zoneinfo. Configuration is otherwise identical, as the seed
says: vm.zone_reclaim_mode = 0 everywhere.
"""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import Membership, Team
from collectors.archive import load
from collectors.facts import HostFacts
from tests.conftest import FIXTURES
from triage import analysis, cluster, selectors, uploads
from triage.charts import host_bars

BEFORE = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "before"
HOSTS = [f"gp-sdw{i:02d}" for i in range(1, 19)]
NUMA_OFF = {"gp-sdw05", "gp-sdw11", "gp-sdw17"}
SLOW = {"gp-sdw03", "gp-sdw09", "gp-sdw14"}  # STREAM after the page-cache-filling disk test
ODD = NUMA_OFF | SLOW
CLUSTER = "kunpeng/920 gp"  # a space and a slash: the URL must encode it


def _merge_node1_into_node0(block0: str, block1: str) -> str:
    """Node 0's lines with node 1's figures added: the last number of each line
    (meminfo values in kB, zoneinfo page counts); zone headers are kept."""
    out = []
    for a, b in zip(block0.splitlines(), block1.splitlines(), strict=True):
        na, nb = re.search(r"(\d+)(\D*)$", a), re.search(r"(\d+)(\D*)$", b)
        if a.startswith("Node 0, zone") or not na or not nb:
            out.append(a)
        else:
            out.append(a[: na.start(1)] + str(int(na.group(1)) + int(nb.group(1))) + na.group(2))
    return "\n".join(out)


def _numa_off(text: str) -> str:
    """A NUMA-off Kunpeng (node interleaving in firmware): one node."""
    text = text.replace("NUMA node(s):          2", "NUMA node(s):          1")
    two_nodes = "NUMA node0 CPU(s):     0-47\nNUMA node1 CPU(s):     48-95"
    text = text.replace(two_nodes, "NUMA node0 CPU(s):     0-95")
    # numactl -H: one node holding every CPU and both sockets' memory
    cpus = " ".join(str(c) for c in range(96))
    numactl = re.search(r"available: 2 nodes \(0-1\)\n.*?  1:  32  10\n", text, re.S).group(0)
    sizes = [int(v) for v in re.findall(r"node \d size: (\d+) MB", numactl)]
    frees = [int(v) for v in re.findall(r"node \d free: (\d+) MB", numactl)]
    one_node = (
        "available: 1 nodes (0)\n"
        f"node 0 cpus: {cpus}\n"
        f"node 0 size: {sum(sizes)} MB\n"
        f"node 0 free: {sum(frees)} MB\n"
        "node distances:\nnode   0\n  0:  10\n"
    )
    text = text.replace(numactl, one_node)
    # node meminfo: node1's file disappears, node0's holds both
    node0 = re.search(r"(?<=node0/meminfo\n)(Node 0 .*\n)+", text).group(0)
    node1_cmd = re.search(r"\[root@\S+ ~\]# cat /sys/devices/system/node/node1/meminfo\n(Node 1 .*\n)+", text)
    node1 = node1_cmd.group(0).split("\n", 1)[1]
    text = text.replace(node0, _merge_node1_into_node0(node0, node1.replace("Node 1", "Node 0")) + "\n")
    text = text.replace(node1_cmd.group(0), "")
    # zoneinfo: node 1's Normal zone becomes part of node 0's
    zones = re.search(r"Node 0, zone   Normal\n(?:  .*\n)+", text).group(0)
    zone1 = re.search(r"Node 1, zone   Normal\n(?:  .*\n)+", text).group(0)
    text = text.replace(zones, _merge_node1_into_node0(zones, zone1.replace("Node 1", "Node 0")) + "\n")
    return text.replace(zone1, "")


def host_text(host: str) -> str:
    """The transcript of one generated host."""
    template = "gp-sdw03" if host in SLOW else "gp-sdw01"
    text = (BEFORE / f"{template}.txt").read_text(encoding="utf-8").replace(template, host)
    if host in NUMA_OFF:
        text = _numa_off(text)
    # Each host measures a little differently (the seed quotes ~15000 and ~6000).
    jitter = (int(host[-2:]) % 7 - 3) * 11.3
    for name in ("Copy", "Scale", "Add", "Triad"):
        line = re.search(rf"^{name}:\s+(\d+\.\d)", text, re.M)
        value = float(line.group(1)) + jitter
        text = text.replace(line.group(0), line.group(0).replace(line.group(1), f"{value:.1f}"))
    return text


def generated_hosts() -> list[HostFacts]:
    return [load(host_text(h).encode(), name=f"{h}.txt", label=h, split=False).host for h in HOSTS]


# ------------------------------------------------------------------ pure comparison


def test_generated_hosts_parse_as_intended():
    hosts = {h.label: h for h in generated_hosts()}
    assert {name for name, h in hosts.items() if h.numa_node_count() == 1} == NUMA_OFF
    off = hosts["gp-sdw05"]
    assert off.cpu.numa_nodes == 1 and len(off.numa.nodes[0].cpus) == 96
    assert off.numa.nodes[0].mem_total_kb() == 2 * hosts["gp-sdw01"].numa.nodes[0].mem_total_kb()
    assert not off.errors and not hosts["gp-sdw01"].errors
    triad = {h.label: next(b.value for b in h.benchmarks if b.name == "Triad") for h in hosts.values()}
    assert {name for name, v in triad.items() if v < 7000} == SLOW
    assert len(set(triad.values())) > 3  # not 18 copies of one figure


def test_compare_highlights_exactly_the_six_odd_hosts():
    matrix = cluster.compare(generated_hosts())
    assert set(matrix.differing_hosts()) == ODD
    by_key = {c.key: c for c in matrix.columns}
    assert {"numa_nodes", "memory_per_node", "page_cache_share", "zone_reclaim_mode", "kernel"} <= set(by_key)
    assert "bench:stream:Triad:MB/s" in by_key

    def odd(key: str) -> set[str]:
        return {r.label for r, c in zip(matrix.rows, matrix.column(key), strict=True) if c.differs}

    assert odd("numa_nodes") == NUMA_OFF
    assert odd("memory_per_node") == NUMA_OFF
    assert odd("page_cache_share") == SLOW
    assert odd("bench:stream:Triad:MB/s") == SLOW
    assert odd("zone_reclaim_mode") == odd("kernel") == set()
    # The highlighted cell tells the usual value.
    nodes = dict(zip([r.label for r in matrix.rows], matrix.column("numa_nodes"), strict=True))
    assert nodes["gp-sdw05"].shown == "1" and nodes["gp-sdw05"].reference == "2"
    assert not nodes["gp-sdw05"].by_median
    triad = dict(zip([r.label for r in matrix.rows], matrix.column("bench:stream:Triad:MB/s"), strict=True))
    assert triad["gp-sdw03"].by_best and triad["gp-sdw03"].reference.endswith("MB/s")


def test_compare_without_a_majority_highlights_nothing():
    hosts = generated_hosts()[:4]
    for h in hosts[:2]:
        h.sysctl.values["vm.zone_reclaim_mode"] = "1"
    matrix = cluster.compare(hosts)
    assert not any(c.differs for c in matrix.column("zone_reclaim_mode"))


def test_a_cluster_split_in_two_groups_highlights_no_measure():
    """The Kunpeng seed's four hosts: two at ~45% page cache, two at ~96%. The
    median (70%) is no host's usual value, so no page-cache cell is odd; the two
    slow STREAM results still are (1.5x below the median)."""
    hosts = [h for h in generated_hosts() if h.label in ("gp-sdw01", "gp-sdw02")] + [
        h for h in generated_hosts() if h.label in sorted(SLOW)[:2]
    ]
    matrix = cluster.compare(hosts)
    assert not any(c.differs for c in matrix.column("page_cache_share"))
    slow = {
        r.label
        for r, c in zip(matrix.rows, matrix.column("bench:stream:Triad:MB/s"), strict=True)
        if c.differs
    }
    assert slow == set(sorted(SLOW)[:2])


def test_fleet_rules_name_the_odd_hosts():
    findings = {f.rule: f for f in cluster.fleet_findings(generated_hosts())}
    assert set(findings) == {"fleet.numa_config_drift", "fleet.benchmark_spread"}
    drift, spread = findings["fleet.numa_config_drift"], findings["fleet.benchmark_spread"]
    assert "15 of 18 hosts have 2; different: gp-sdw05 (1), gp-sdw11 (1), gp-sdw17 (1)" in drift.explanation
    assert {e.host for e in drift.evidence} - {"gp-sdw01"} == NUMA_OFF
    assert "3 of 18 hosts are 1.5x or more worse than the best" in spread.explanation
    assert all(name in spread.explanation and name in spread.explanation_zh for name in SLOW)
    assert {e.host for e in spread.evidence[:3]} == SLOW and spread.evidence[3].host not in ODD


def test_host_bars_colours_outliers_and_escapes_labels():
    svg = host_bars([("<b>", 15000.0, False), ("slow", 6000.0, True)], unit="MB/s", reference=14000.0)
    assert svg.startswith("<svg") and "<b>" not in svg and "&lt;b&gt;" in svg
    assert svg.count('data-outlier="1"') == 1 and 'data-reference="14000"' in svg
    assert host_bars([]) == ""


# --------------------------------------------------------------------- the page


@pytest.fixture
def world(db, settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    users = {}
    for name in ("alice", "bob"):
        users[name] = get_user_model().objects.create_user(name, password=f"{name}-pw-123")
        team = Team.objects.create(name=f"team {name}", slug=f"team-{name}")
        Membership.objects.create(user=users[name], team=team, role="engineer")
    return users


def _upload(owner, host: str, text: str, cluster_name: str):
    return uploads.create_snapshot(
        owner=owner,
        uploaded_file=SimpleUploadedFile(f"{host}.txt", text.encode()),
        filename=f"{host}.txt",
        label=host,
        cluster=cluster_name,
    )


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_cluster_page_of_18_hosts(world):
    alice, bob = world["alice"], world["bob"]
    t0 = time.monotonic()
    snaps = {}
    for host in HOSTS:
        snaps[host] = _upload(alice, host, host_text(host), CLUSTER)
        assert analysis.analyze_snapshot_now(snapshot_id=snaps[host].pk).status == "done"
    # Bob's team uses the same cluster name for its own machine.
    bobs = _upload(bob, "bob-host", host_text("gp-sdw01").replace("gp-sdw01", "bob-host"), CLUSTER)
    analysis.analyze_snapshot_now(snapshot_id=bobs.pk)
    assert time.monotonic() - t0 < 60

    url = reverse("triage:cluster_detail", args=[CLUSTER])
    assert url == "/snapshots/clusters/kunpeng/920%20gp/"
    response = _client(alice).get(url)
    assert response.status_code == 200
    html = response.content.decode()

    # Highlighted cells for exactly the six odd hosts.
    rows = dict(re.findall(r'<tr data-host="([^"]+)"[^>]*>(.*?)</tr>', html, re.S))
    assert set(rows) == set(HOSTS) and "bob-host" not in html
    highlighted = {host for host, row in rows.items() if 'data-differs="1"' in row}
    assert highlighted == ODD
    # The usual value is written under the cell (a phone cannot hover), labelled for the card view.
    assert re.search(
        r'class="differs" data-differs="1" data-label="[^"]+">1<span class="usual">Most hosts: 2</span></td>',
        rows["gp-sdw05"],
    )
    assert "Cluster median:" in rows["gp-sdw03"]
    # Each host links to its snapshot.
    assert f'href="{snaps["gp-sdw09"].get_absolute_url()}">gp-sdw09</a>' in rows["gp-sdw09"]

    # Fleet findings name the hosts.
    article = r'<article class="finding[^"]*" data-rule="([^"]+)">(.*?)</article>'
    findings = dict(re.findall(article, html, re.S))
    assert set(findings) == {"fleet.numa_config_drift", "fleet.benchmark_spread"}
    assert all(h in findings["fleet.numa_config_drift"] for h in NUMA_OFF)
    assert all(h in findings["fleet.benchmark_spread"] for h in SLOW)

    # The benchmark chart, server-side: the slow hosts' bars are the outliers.
    assert "<script" not in html.split("<main", 1)[-1]
    svg = re.search(r"<svg .*?</svg>", html, re.S).group(0)
    outliers = set(re.findall(r'data-host="([^"]+)" data-value="[^"]+" data-outlier="1"', svg))
    assert outliers == SLOW and svg.count("<rect") == 18

    # The stored fleet findings agree with the page's: the last analysis (gp-sdw18's) saw
    # every host and rewrote the slow hosts' rows; gp-sdw18 is not slow and holds none.
    stored = snaps["gp-sdw14"].findings.filter(rule="fleet.benchmark_spread").get()
    assert all(h in stored.explanation for h in SLOW)
    assert not snaps["gp-sdw18"].findings.filter(rule="fleet.benchmark_spread").exists()

    # Bob sees only his own host under that name; someone with no host of it gets a 404.
    bob_html = _client(bob).get(url).content.decode()
    assert "bob-host" in bob_html and not any(h in bob_html for h in HOSTS)
    carol = get_user_model().objects.create_user("carol", password="carol-pw-123")
    assert _client(carol).get(url).status_code == 404
    assert Client().get(url).status_code == 302  # sign in first


def test_cluster_pages_link_to_the_comparison(world):
    alice = world["alice"]
    snap = _upload(alice, "gp-sdw01", host_text("gp-sdw01"), "k/1")
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    other = _upload(alice, "gp-sdw02", host_text("gp-sdw02"), "k/1")
    analysis.analyze_snapshot_now(snapshot_id=other.pk)
    client = _client(alice)
    compare = reverse("triage:cluster_detail", args=["k/1"])
    assert compare in client.get(snap.get_absolute_url()).content.decode()
    assert compare in client.get(reverse("triage:snapshot_list") + "?cluster=k/1").content.decode()
    # A single host compares with nothing, but the page still works.
    assert client.get(compare).status_code == 200


def test_cluster_page_escapes_names_and_lists_pending_snapshots(world):
    alice = world["alice"]
    name = '<script>alert("x")</script>'
    done = _upload(alice, "gp-sdw01", host_text("gp-sdw01"), name)
    analysis.analyze_snapshot_now(snapshot_id=done.pk)
    queued = _upload(alice, "gp-sdw02", host_text("gp-sdw02"), name)
    html = _client(alice).get(reverse("triage:cluster_detail", args=[name])).content.decode()
    assert name not in html and "&lt;script&gt;" in html
    assert queued.get_absolute_url() in html and "Not compared" in html


def test_a_re_snapshot_replaces_the_older_one_of_its_host(world):
    alice = world["alice"]
    after = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "after"
    for host in ("gp-sdw01", "gp-sdw03"):
        analysis.analyze_snapshot_now(snapshot_id=_upload(alice, host, host_text(host), "k").pk)
    fixed = _upload(alice, "gp-sdw03", (after / "gp-sdw03.txt").read_text(), "k")
    analysis.analyze_snapshot_now(snapshot_id=fixed.pk)
    view = cluster.load_cluster(selectors.visible_snapshots(alice), "k")
    assert [s.pk for s in view.snapshots if s.label == "gp-sdw03"] == [fixed.pk]
    assert view.superseded == 1
    triad = dict(
        zip([r.label for r in view.matrix.rows], view.matrix.column("bench:stream:Triad:MB/s"), strict=True)
    )
    assert triad["gp-sdw03"].value > 14000  # the fixed host's figure, not the old 6104.7
    # STREAM now agrees; the fix itself (zone_reclaim_mode = 1 on one host so far) is drift.
    rules = {f.rule: f for f in view.fleet_findings}
    assert set(rules) == {"fleet.numa_config_drift"}
    assert "vm.zone_reclaim_mode" in rules["fleet.numa_config_drift"].explanation


# ------------------------------------------------- issue 25 point 7: the good host


KUNPENG_BEFORE = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "before"
ONE_FAST_TWO_SLOW = ("gp-sdw01", "gp-sdw03", "gp-sdw04")  # STREAM ~15000 vs ~6000 MB/s


def test_the_fast_host_is_never_the_outlier_of_two_slow_ones():
    """Issue 25 point 7: with two slow hosts and one fast, the median is the slow
    value and the fast host was highlighted. Judged against the best host in
    the metric's direction, the slow ones are."""
    hosts = [
        load((KUNPENG_BEFORE / f"{h}.txt").read_bytes(), name=f"{h}.txt", label=h, split=False).host
        for h in ONE_FAST_TWO_SLOW
    ]
    matrix = cluster.compare(hosts)
    column = next(c for c in matrix.columns if c.key.startswith("bench:stream:") and "triad" in c.key.lower())
    cells = dict(zip([r.label for r in matrix.rows], matrix.column(column.key), strict=True))
    assert not cells["gp-sdw01"].differs
    assert cells["gp-sdw03"].differs and cells["gp-sdw04"].differs
    best = cells["gp-sdw01"].value
    assert cells["gp-sdw03"].by_best and cells["gp-sdw03"].reference.startswith(f"{best:g}")
    series = [s for s in cluster.benchmark_series(matrix) if s[0].key == column.key]
    (_column, _points, reference), *_ = series
    assert reference == cells["gp-sdw01"].value


def test_the_fast_host_is_not_counted_as_affected_on_the_rules_page(world):
    alice = world["alice"]
    snaps = {
        h: _upload(alice, h, (KUNPENG_BEFORE / f"{h}.txt").read_text(), "stream") for h in ONE_FAST_TWO_SLOW
    }
    for snap in snaps.values():
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    fresh = {h: type(snap).objects.get(pk=snap.pk) for h, snap in snaps.items()}
    rule = "fleet.benchmark_spread"
    blamed = {h for h, snap in fresh.items() if snap.current_findings().filter(rule=rule).exists()}
    assert blamed == {"gp-sdw03", "gp-sdw04"}
    html = _client(alice).get("/rules/").content.decode()
    assert 'data-rule="fleet.benchmark_spread" data-hosts="2"' in html


KUNPENG_AFTER = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "after"


def test_the_drift_finding_is_stored_on_the_differing_hosts_only(world):
    """Issue 25: the fleet drift finding was stored on every host of the
    cluster. Two slow hosts at vm.zone_reclaim_mode = 0 and the fixed, fast
    one at 1 (its after-snapshot): the slow ones differ from the better host,
    and only their snapshots hold the finding (and count on /rules/)."""
    alice = world["alice"]
    texts = {h: (KUNPENG_BEFORE / f"{h}.txt").read_text() for h in ("gp-sdw03", "gp-sdw04")}
    texts["gp-sdw01"] = (KUNPENG_AFTER / "gp-sdw01.txt").read_text()
    snaps = {h: _upload(alice, h, text, "rollout") for h, text in texts.items()}
    for snap in snaps.values():
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    rule = "fleet.numa_config_drift"
    fresh = {h: type(snap).objects.get(pk=snap.pk) for h, snap in snaps.items()}
    held = {h for h, snap in fresh.items() if snap.current_findings().filter(rule=rule).exists()}
    assert held == {"gp-sdw03", "gp-sdw04"}
    # the slow hosts' reports say it, naming them and the reference host
    text = fresh["gp-sdw03"].current_findings().get(rule=rule).explanation
    assert "different: gp-sdw03 (0), gp-sdw04 (0)" in text or "different: gp-sdw04 (0), gp-sdw03 (0)" in text
    html = _client(alice).get("/rules/").content.decode()
    assert f'data-rule="{rule}" data-hosts="2"' in html
