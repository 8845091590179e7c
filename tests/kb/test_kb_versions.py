"""Known issues by version (kb.versions, kb.similarity.known_issues_for): a
case states the versions it applies to, and a snapshot in those ranges is
told so in its report."""

from __future__ import annotations

import pytest

from collectors.archive import load_snapshot
from kb import authoring, services, versions
from kb.similarity import known_issues_for

UNAME = "$ uname -r\n2.6.32-358.el6.x86_64\n"


def test_a_version_is_in_a_range_when_every_constraint_holds():
    assert versions.in_range("2.6.32-358.el6.x86_64", ">=2.6.32-303, <2.6.32-642")
    assert not versions.in_range("2.6.32-642.el6", ">=2.6.32-303, <2.6.32-642")
    assert versions.in_range("7.0.1", ">=7.0") and not versions.in_range("6.19", ">=7.0")
    assert versions.in_range("QEMU 2.12.0", "2.12")
    assert not versions.valid_range("newer than 3") and not versions.in_range("3.1", "")


def test_a_contradicted_range_is_no_match(tmp_path):
    host = tmp_path / "h.txt"
    host.write_text(UNAME)
    found = versions.snapshot_versions(load_snapshot([host]))
    assert found == {"kernel": ["2.6.32-358.el6.x86_64"]}
    assert (
        versions.version_matches({"kernel": ">=2.6.32-303"}, found)[0]["version"] == "2.6.32-358.el6.x86_64"
    )
    assert versions.version_matches({"kernel": ">=3.5"}, found) == []
    # a range on a version the snapshot does not show neither matches nor contradicts
    assert versions.version_matches({"database": "10.4"}, found) == []


@pytest.mark.django_db
def test_a_snapshot_in_a_library_case_range_is_told_so_with_the_version_facts(tmp_path):
    services.load_all(use_real_engine=False, library=True)
    host = tmp_path / "db.txt"
    host.write_text(UNAME)
    issues = known_issues_for(load_snapshot([host]), language="zh")
    assert [i["slug"] for i in issues] == ["mysql-swappiness-zero-oom-killer"]
    assert issues[0]["matches"] == [
        {"kind": "kernel", "version": "2.6.32-358.el6.x86_64", "range": ">=2.6.32-303, <2.6.32-642"}
    ]
    assert "OOM" in issues[0]["title"] and issues[0]["url"].endswith("/zh/")
    newer = tmp_path / "new.txt"
    newer.write_text("$ uname -r\n3.10.0-1160.el7.x86_64\n")
    assert known_issues_for(load_snapshot([newer])) == []


@pytest.mark.django_db
def test_a_written_case_keeps_its_version_ranges_through_markdown():
    services.load_catalogue()
    doc = authoring.parse_markdown(
        "---\nlanguage: en\nslug: k\napplies_to:\n  kernel: '>=7.0'\n---\n# T\n## Symptom\nslow\n"
    )
    assert doc.applies_to == {"kernel": ">=7.0"}
    assert "applies_to:\n  kernel: '>=7.0'" in authoring.render_markdown(doc)
    created = authoring.do_create_case(user=None, documents=[doc])
    assert created["zh"].applies_to == {"kernel": ">=7.0"}
    with pytest.raises(authoring.CaseInputError, match="not read"):
        authoring.do_create_case(user=None, documents=[authoring.CaseDocument(
            language="en", title="T", symptom="s", applies_to={"kernel": "recent ones"})])  # fmt: skip


@pytest.mark.django_db
def test_a_qualifying_case_of_these_versions_ranks_higher_with_a_version_contribution(tmp_path):
    from kb import similarity

    services.load_all(use_real_engine=False, library=True)
    host = tmp_path / "db.txt"
    host.write_text(UNAME)
    results = [
        {"slug": "other-case", "score": 0.5, "contributions": []},
        {"slug": "mysql-swappiness-zero-oom-killer", "score": 0.45, "contributions": []},
    ]
    ranked = similarity._with_version_matches(results, load_snapshot([host]), language="en")
    assert [r["slug"] for r in ranked] == ["mysql-swappiness-zero-oom-killer", "other-case"]
    assert ranked[0]["score"] == 0.56 and ranked[0]["version_matches"][0]["kind"] == "kernel"
    assert ranked[0]["contributions"] == [
        {"kind": "version", "name": "kernel 2.6.32-358.el6.x86_64", "points": 0.11}
    ]


@pytest.mark.django_db
def test_the_report_of_a_snapshot_in_the_range_shows_the_case_and_the_version_fact(client, django_user_model):
    from triage import analysis, uploads

    services.load_all(use_real_engine=False, library=True)
    user = django_user_model.objects.create_user("ann", password="ann-pw-123456")
    snap = uploads.create_snapshot(owner=user, data=UNAME.encode(), filename="db.txt")
    analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    client.force_login(user)
    page = client.get(f"/snapshots/{snap.pk}/").content.decode()
    assert 'id="known-issues"' in page and 'data-slug="mysql-swappiness-zero-oom-killer"' in page
    assert "<code>2.6.32-358.el6.x86_64</code>" in page and "&gt;=2.6.32-303, &lt;2.6.32-642" in page
