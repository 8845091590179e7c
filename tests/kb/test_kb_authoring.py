"""kb.authoring: new cases written on the page, from a snapshot, from files
or from a pasted write-up, all drafts under review."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile

from kb import authoring, services
from kb.models import Case, CaseRevision
from tests.conftest import FIXTURES

pytestmark = pytest.mark.django_db

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
PERCONA = FIXTURES / "seeds" / "percona-numa-interleave-startup" / "before" / "db-3301.txt"


@pytest.fixture
def people(django_user_model):
    from accounts.services import add_member, create_team

    alice = django_user_model.objects.create_user("alice", password="alice-pw-12345")
    add_member(team=create_team(name="DB"), user=alice)
    loner = django_user_model.objects.create_user("loner", password="loner-pw-12345")
    services.load_catalogue()
    return {"alice": alice, "loner": loner}


def _doc(**values) -> authoring.CaseDocument:
    return authoring.CaseDocument(
        **{"language": "en", "title": "Slow index build", "symptom": "CREATE INDEX takes 120 s", **values}
    )


def test_a_new_case_is_a_draft_with_its_other_language_pre_filled(people):
    created = authoring.do_create_case(user=people["alice"], documents=[_doc(cause="vCPUs float")])
    assert {c.language: (c.state, c.translation_pending) for c in created.values()} == {
        "en": ("draft", False),
        "zh": ("draft", True),
    }
    assert created["en"].slug == "slow-index-build" and created["en"].author == people["alice"]
    assert created["en"].revisions.get().action == CaseRevision.Action.CREATED
    # The review workflow applies: a pre-filled version blocks the submission.
    with pytest.raises(services.ReviewError, match="Chinese"):
        services.submit_for_review(slug="slow-index-build", user=people["alice"])
    again = authoring.do_create_case(user=people["alice"], documents=[_doc()])
    assert again["en"].slug == "slow-index-build-2"


def test_only_team_members_and_support_write_cases(people):
    with pytest.raises(PermissionDenied):
        authoring.do_create_case(user=people["loner"], documents=[_doc()])


def test_an_uploaded_snapshot_fills_the_signature_and_the_environment(people):
    analysis = authoring.analyse_text(name=PERCONA.name, data=PERCONA.read_bytes())
    created = authoring.do_create_case(user=people["alice"], documents=[_doc()], analysis=analysis)
    case = Case.objects.get(pk=created["en"].pk)
    assert "mysql.numa_interleave_populate_startup" in case.signature_rules
    assert "numa:multi-node" in case.signature_features
    assert case.signature_source == "upload db-3301.txt" and case.signature_engine_version
    assert case.database and case.cpu_architecture == "x86_64"
    assert set(case.rule_rows.values_list("rule", flat=True)) == set(case.signature_rules)


def test_an_existing_snapshot_the_author_may_see_fills_the_signature(people, django_user_model):
    from triage import analysis, uploads

    snap = uploads.create_snapshot(owner=people["alice"], data=ZSTACK.read_bytes(), filename=ZSTACK.name)
    snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    assert (snap.pk, f"#{snap.pk} {snap.display_name}") in authoring.snapshot_choices(people["alice"])
    found = authoring.analyse_snapshot(user=people["alice"], snapshot_id=snap.pk)
    assert "kvm.vcpus_unpinned" in found.rules and found.environment["hypervisor"] == "KVM"
    assert found.source == f"snapshot {snap.pk}"
    # Someone else's snapshot of another team is not offered and not read.
    from accounts.services import add_member, create_team

    bob = django_user_model.objects.create_user("bob", password="bob-pw-1234567")
    add_member(team=create_team(name="Other"), user=bob)
    assert authoring.snapshot_choices(bob) == []
    with pytest.raises(authoring.CaseInputError):
        authoring.analyse_snapshot(user=bob, snapshot_id=snap.pk)


def test_a_pasted_write_up_keeps_its_prose_as_the_symptom(people):
    text = "MariaDB got slow after the move.\n" + PERCONA.read_text(encoding="utf-8")
    created = authoring.do_create_from_writeup(
        user=people["alice"], language="en", title="Slow start", text=text
    )
    case = created["en"]
    assert case.symptom.startswith("MariaDB got slow after the move.")
    assert len(case.symptom) < len(text) / 4  # the outputs are not the symptom
    assert "mysql.numa_interleave_populate_startup" in case.signature_rules
    assert case.cause == ""  # the author adds it before submitting


def test_markdown_sections_are_read_in_either_language():
    doc = authoring.parse_markdown(
        "---\nlanguage: zh\nslug: x\n---\n# 标题\n\n## 症状\n慢\n\n## 原因\n透明大页\n"
    )
    assert (doc.title, doc.symptom, doc.cause, doc.slug) == ("标题", "慢", "透明大页", "x")
    with pytest.raises(authoring.CaseInputError, match="front matter"):
        authoring.parse_markdown("# no front matter\n")
    with pytest.raises(authoring.CaseInputError, match="Unknown section"):
        authoring.parse_markdown("---\nlanguage: en\n---\n# T\n## Workaround\nx\n")


def test_the_new_case_page_writes_a_draft_from_an_uploaded_snapshot(people, client):
    client.force_login(people["alice"])
    assert client.get("/cases/new/").status_code == 200
    response = client.post(
        "/cases/new/",
        {
            "language": "en",
            "title": "Slow start of a Percona server",
            "symptom": "The server takes minutes to start.",
            "cause": "No interleave",
            "platform": "bare-metal",
            "measures": ["disable-numa-interleave"],
            "references": "PS-3967 https://jira.percona.com/browse/PS-3967 slow start",
            "tags": "numa, percona",
            "snapshot_file": SimpleUploadedFile(PERCONA.name, PERCONA.read_bytes()),
        },
    )
    case = Case.objects.get(slug="slow-start-of-a-percona-server", language="en")
    assert response.status_code == 302 and response["Location"] == case.get_absolute_url()
    assert case.state == "draft" and "mysql.numa_interleave_populate_startup" in case.signature_rules
    assert [r.url for r in case.references.all()] == ["https://jira.percona.com/browse/PS-3967"]
    assert sorted(case.tags.values_list("name", flat=True)) == ["numa", "percona"]
    assert [s.measure.slug for s in case.steps.all()] == ["disable-numa-interleave"]


def test_the_new_case_and_import_pages_are_refused_without_a_team(people, client):
    client.force_login(people["loner"])
    assert client.get("/cases/new/").status_code == 403
    assert client.get("/cases/import/").status_code == 403


def test_the_import_page_takes_markdown_files_and_a_write_up(people, client):
    client.force_login(people["alice"])
    files = sorted((FIXTURES / "case_files").glob("redis-*.md"))
    response = client.post(
        "/cases/import/",
        {"form": "files", "documents": [SimpleUploadedFile(p.name, p.read_bytes()) for p in files]},
    )
    assert response.status_code == 302
    assert set(Case.objects.filter(slug="redis-thp-latency").values_list("language", flat=True)) == {
        "en",
        "zh",
    }
    response = client.post(
        "/cases/import/",
        {
            "form": "writeup",
            "language": "zh",
            "title": "启动慢",
            "text": "启动很慢。\n" + PERCONA.read_text(),
        },
    )
    assert response.status_code == 302
    assert Case.objects.get(slug__startswith="case", language="zh").symptom.startswith("启动很慢")
    bad = client.post("/cases/import/", {"form": "files", "documents": [SimpleUploadedFile("x.txt", b"x")]})
    assert bad.status_code == 200 and "Markdown" in bad.content.decode()
