"""Who may read cases (``kb.access``)."""

import pytest
from django.contrib.auth.models import User

from accounts.services import add_member, create_team
from kb.access import readable_cases
from kb.models import Case
from kb.services import save_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def teams():
    return create_team(name="Bank A"), create_team(name="Telco B"), create_team(name="Cloud C")


def test_drafts_are_read_by_their_author_and_support_only(teams, client):
    author = User.objects.create_user("author", password="pw-author-123")
    add_member(team=teams[0], user=author)
    other = User.objects.create_user("other", password="pw-other-1234")
    add_member(team=teams[1], user=other)
    support = User.objects.create_user("sup", password="pw-sup-12345")
    add_member(team=teams[2], user=support, role="support")
    draft = Case(
        slug="session-7-slow-guest",
        language="en",
        title="Slow guest on host cust-hv-17",
        symptom="CREATE INDEX slow",
        state=Case.State.DRAFT,
        author=author,
    )
    save_case(draft, steps=[], metrics=[])

    for user, allowed in ((author, True), (support, True), (other, False)):
        assert readable_cases(user).filter(pk=draft.pk).exists() is allowed
        client.force_login(user)
        page = client.get(f"/cases/{draft.slug}/")
        api = client.get(f"/api/v1/cases/{draft.slug}/")
        listing = client.get("/cases/", {"state": "draft"}).content.decode()
        found = client.get("/api/v1/cases/", {"state": "draft"}).json()
        searched = client.get("/api/v1/cases/", {"state": "draft", "q": "slow guest"}).json()
        assert (page.status_code, api.status_code) == ((200, 200) if allowed else (404, 404)), user
        assert ("cust-hv-17" in listing) is allowed
        assert (found["count"] == 1) is allowed
        assert (searched["count"] == 1) is allowed
