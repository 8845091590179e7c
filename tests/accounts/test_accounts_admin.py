import pytest
from django.contrib.auth.models import User

from accounts.services import add_member, create_team, record_heartbeat

pytestmark = pytest.mark.django_db


def test_admin_pages_of_accounts_models_render(client):
    root = User.objects.create_superuser("root", password="pw-root-12345")
    team = create_team(name="Bank A")
    add_member(team=team, user=root, role="admin")
    heartbeat = record_heartbeat(heartbeat_id=None, worker="celery@node1")
    client.force_login(root)
    for path in (
        "/admin/accounts/team/",
        "/admin/accounts/team/add/",
        f"/admin/accounts/team/{team.pk}/change/",
        "/admin/accounts/membership/",
        "/admin/accounts/workerheartbeat/",
        f"/admin/accounts/workerheartbeat/{heartbeat.pk}/change/",
    ):
        assert client.get(path).status_code == 200, path


def test_team_admin_adds_a_member_inline(client):
    root = User.objects.create_superuser("root", password="pw-root-12345")
    engineer = User.objects.create_user("eng", password="pw-eng-123456")
    client.force_login(root)
    response = client.post(
        "/admin/accounts/team/add/",
        {
            "name": "Telco B",
            "slug": "telco-b",
            "description": "",
            "memberships-TOTAL_FORMS": "1",
            "memberships-INITIAL_FORMS": "0",
            "memberships-0-user": str(engineer.pk),
            "memberships-0-role": "support",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert engineer.memberships.get().role == "support"
