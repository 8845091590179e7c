"""A small world for API and access tests: two engineering teams, support
staff and an administrator; team A owns an analysed snapshot (the OceanBase
founding transcript) and a troubleshooting session with it attached."""

from __future__ import annotations

from dataclasses import dataclass, field

from rest_framework.test import APIClient

from tests.conftest import FIXTURES

TRANSCRIPT = FIXTURES / "seeds" / "oceanbase-bmsql-tuning" / "before" / "obs-197.txt"


@dataclass
class World:
    users: dict = field(default_factory=dict)
    tokens: dict = field(default_factory=dict)
    teams: dict = field(default_factory=dict)
    snapshot: object = None
    session: object = None

    def api(self, role: str | None) -> APIClient:
        client = APIClient()
        if role is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {self.tokens[role]}")
        return client


def build_world(django_user_model, *, analyse: bool = True) -> World:
    from accounts.models import Membership, Team
    from accounts.services import rotate_api_token
    from kb.services import load_all
    from triage import analysis, uploads
    from troubleshoot import lifecycle, snapshots

    load_all(use_real_engine=False)
    w = World()
    for slug in ("team-a", "team-b", "support"):
        w.teams[slug] = Team.objects.create(name=slug.title(), slug=slug)
    spec = {
        "engineer_a": ("team-a", "engineer"),
        "engineer_b": ("team-b", "engineer"),
        "support": ("support", "support"),
        "admin": ("support", "admin"),
    }
    for name, (team, role) in spec.items():
        if name == "admin":
            user = django_user_model.objects.create_superuser(name, f"{name}@example.com", f"{name}-pass-123")
        else:
            user = django_user_model.objects.create_user(name, password=f"{name}-pass-123")
        Membership.objects.create(user=user, team=w.teams[team], role=role)
        w.users[name] = user
        w.tokens[name] = rotate_api_token(user=user).key

    # Team B's own session first: team A's objects then have ids that differ
    # from each other on every database, so a URL filled with the wrong kind
    # of id cannot pass by accident.
    lifecycle.create_session(owner=w.users["engineer_b"], title="team B's own session")
    owner = w.users["engineer_a"]
    w.snapshot = uploads.create_snapshot(
        owner=owner, data=TRANSCRIPT.read_bytes(), filename=TRANSCRIPT.name, label="obs-197"
    )
    if analyse:
        analysis.analyze_snapshot_now(snapshot_id=w.snapshot.pk, force=True)
        w.snapshot.refresh_from_db()
    w.session = lifecycle.create_session(owner=owner, title="BMSQL below expectation", metric_name="tpmC")
    snapshots.attach_snapshot(session=w.session, user=owner, snapshot=w.snapshot)
    return w
