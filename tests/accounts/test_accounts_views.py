import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import translation

from accounts.models import ApiToken
from accounts.services import add_member, create_team

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-staple"


@pytest.fixture
def user():
    return User.objects.create_user("engineer", password=PASSWORD)


def shown_token(html: str) -> str:
    """The new key as the profile page shows it, the one time it does."""
    return re.search(r'data-testid="new-token">([0-9a-f]{40})<', html).group(1)


def csrf_token_from(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def test_pages_require_login(client):
    for path in ("/", "/profile/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")


def test_login_page_is_public_and_has_csrf_and_language_switch(client):
    response = client.get("/accounts/login/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'action="/i18n/setlang/"' in html
    assert 'value="zh-hans"' in html
    # No navigation for anonymous visitors.
    assert "Snapshots" not in html


def test_login_with_csrf_then_dashboard_and_logout_by_post(user):
    client = Client(enforce_csrf_checks=True)
    token = csrf_token_from(client.get("/accounts/login/").content.decode())

    rejected = client.post("/accounts/login/", {"username": "engineer", "password": PASSWORD})
    assert rejected.status_code == 403  # no CSRF token

    response = client.post(
        "/accounts/login/",
        {"username": "engineer", "password": PASSWORD, "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302 and response["Location"] == "/"

    dashboard = client.get("/")
    html = dashboard.content.decode()
    assert dashboard.status_code == 200
    for label, href in (("Snapshots", "/snapshots/"), ("Cases", "/cases/"), ("Sessions", "/sessions/")):
        assert label in html
        assert f'href="{href}' in html
    assert 'href="/snapshots/new/"' in html
    assert "Recent snapshots" in html  # triage's section, included by the dashboard

    assert client.get("/accounts/logout/").status_code == 405
    assert client.get("/").status_code == 200  # still signed in
    logout = client.post("/accounts/logout/", {"csrfmiddlewaretoken": csrf_token_from(html)})
    assert logout.status_code == 302
    assert client.get("/").status_code == 302


def test_wrong_password_is_rejected(client, user):
    response = client.post("/accounts/login/", {"username": "engineer", "password": "nope"})
    assert response.status_code == 200
    assert "correct username and password" in response.content.decode()


def test_switch_to_chinese_on_login_page_and_after_login(client, user):
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/accounts/login/"})
    assert response.status_code == 302
    html = client.get("/accounts/login/").content.decode()
    assert '<html lang="zh-hans">' in html
    assert "登录" in html and "用户名" in html

    client.force_login(User.objects.get(username="engineer"))
    html = client.get("/").content.decode()
    for word in ("概览", "快照", "案例", "排障会话", "退出登录"):
        assert word in html

    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    html = client.get("/").content.decode()
    assert '<html lang="en">' in html and "Dashboard" in html


def test_set_language_ignores_foreign_redirects(client):
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "https://evil.example/"})
    assert response.status_code == 302
    assert "evil.example" not in response["Location"]


def test_dashboard_lists_teams_with_escaped_names(client, user):
    team = create_team(name='<script>alert("x")</script>', slug="xss")
    add_member(team=team, user=user, role="support")
    client.force_login(user)
    html = client.get("/").content.decode()
    assert '<script>alert("x")</script>' not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "Support" in html


def test_profile_token_create_show_once_replace_and_revoke(client, user):
    client.force_login(user)
    html = client.get("/profile/").content.decode()
    assert "You have no API token." in html

    assert client.get("/profile/token/").status_code == 405
    response = client.post("/profile/token/")
    assert response.status_code == 302 and response["Location"] == "/profile/"
    first_view = client.get("/profile/").content.decode()
    key = shown_token(first_view)
    assert ApiToken.objects.get(user=user).matches(key)
    assert f"Authorization: Token {key}" in first_view
    second_view = client.get("/profile/").content.decode()
    assert key not in second_view
    assert key[:6] in second_view

    client.post("/profile/token/")
    new_key = shown_token(client.get("/profile/").content.decode())
    assert new_key != key and ApiToken.objects.get(user=user).matches(new_key)

    client.post("/profile/token/revoke/")
    assert not ApiToken.objects.filter(user=user).exists()
    assert "You have no API token." in client.get("/profile/").content.decode()


def test_api_token_authenticates_api_requests(client, user):
    client.force_login(user)
    client.post("/profile/token/")
    key = shown_token(client.get("/profile/").content.decode())
    api = Client()
    assert api.get("/api/schema/").status_code in (401, 403)
    assert api.get("/api/schema/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


def test_password_change_page(client, user):
    client.force_login(user)
    response = client.post(
        "/accounts/password/",
        {
            "old_password": PASSWORD,
            "new_password1": "another-long-pass-77",
            "new_password2": "another-long-pass-77",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("another-long-pass-77")


def test_dashboard_lists_open_sessions(client, user):
    from troubleshoot.lifecycle import close_session, create_session

    create_session(owner=user, title="Slow <CREATE INDEX> on guest")
    closed = create_session(owner=user, title="Old closed session")
    close_session(session=closed, user=user, outcome="resolved", root_cause="pins", lessons="")
    client.force_login(user)
    html = client.get("/").content.decode()
    assert "Slow &lt;CREATE INDEX&gt; on guest" in html  # open, escaped
    assert "Old closed session" not in html  # only open sessions are listed


def test_dashboard_says_where_tasks_run(client, user, settings):
    client.force_login(user)
    settings.CELERY_TASK_ALWAYS_EAGER = True  # embedded default: no REDIS_URL
    assert "analyses run inside the web process" in client.get("/").content.decode()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    html = client.get("/").content.decode()
    assert "No worker has answered a heartbeat yet." in html


def test_dashboard_without_team_links_to_how_teams_and_users_are_added(client, user):
    client.force_login(user)
    dashboard = client.get("/").content.decode()
    assert 'href="/help/teams/" id="teams-help"' in dashboard
    page = client.get("/help/teams/").content.decode()
    assert "manage.py addteam" in page and "--role support" in page
    assert "/admin/" not in page  # the admin site is mentioned to staff only
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    with translation.override("en"):  # the middleware's activation must not outlive the test
        assert "如何添加团队和用户" in client.get("/help/teams/").content.decode()
