import pytest
from django.contrib.auth.models import AnonymousUser, User

from accounts.access import can_view_team, is_support, role_in, visible_teams
from accounts.models import Membership
from accounts.services import add_member, create_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def teams():
    return create_team(name="Bank A"), create_team(name="Telco B"), create_team(name="Cloud C")


def test_engineer_sees_only_own_teams(teams):
    bank, telco, _cloud = teams
    alice = User.objects.create_user("alice", password="pw-alice-123")
    add_member(team=bank, user=alice)
    add_member(team=telco, user=alice, role=Membership.Role.ENGINEER)

    assert not is_support(alice)
    assert set(visible_teams(alice)) == {bank, telco}
    assert can_view_team(alice, bank)
    assert not can_view_team(alice, teams[2])
    assert role_in(alice, bank) == "engineer"
    assert role_in(alice, teams[2]) is None


@pytest.mark.parametrize("role", ["support", "admin"])
def test_support_and_admin_roles_see_every_team(teams, role):
    bob = User.objects.create_user("bob", password="pw-bob-1234")
    add_member(team=teams[0], user=bob, role=role)

    assert is_support(bob)
    assert set(visible_teams(bob)) == set(teams)


def test_superuser_is_support_without_membership(teams):
    root = User.objects.create_superuser("root", password="pw-root-1234")
    assert is_support(root)
    assert visible_teams(root).count() == 3


def test_anonymous_and_inactive_users_see_nothing(teams):
    carol = User.objects.create_user("carol", password="pw-carol-123", is_active=False)
    add_member(team=teams[0], user=carol, role="admin")

    for user in (AnonymousUser(), carol):
        assert not is_support(user)
        assert visible_teams(user).count() == 0
        assert not can_view_team(user, None)


def test_objects_without_team_are_visible_to_signed_in_users():
    dave = User.objects.create_user("dave", password="pw-dave-1234")
    assert can_view_team(dave, None)


def test_membership_is_unique_and_role_is_updated(teams):
    erin = User.objects.create_user("erin", password="pw-erin-1234")
    add_member(team=teams[0], user=erin)
    add_member(team=teams[0], user=erin, role="support")
    assert Membership.objects.filter(user=erin).count() == 1
    assert role_in(erin, teams[0]) == "support"


def test_unknown_role_is_rejected(teams):
    frank = User.objects.create_user("frank", password="pw-frank-123")
    with pytest.raises(ValueError):
        add_member(team=teams[0], user=frank, role="owner")


def test_support_sees_team_less_snapshots_engineers_do_not(teams):
    from triage.models import Snapshot
    from triage.selectors import visible_snapshots

    lone = User.objects.create_user("lone", password="pw-lone-1234")  # no team
    shot = Snapshot.objects.create(owner=lone, label="customer-db-01", sha256="0" * 64, size=1)
    support = User.objects.create_user("sup", password="pw-sup-12345")
    add_member(team=teams[0], user=support, role="support")
    engineer = User.objects.create_user("eng", password="pw-eng-12345")
    add_member(team=teams[0], user=engineer)

    assert list(visible_snapshots(lone)) == [shot]
    assert list(visible_snapshots(support)) == [shot]
    assert list(visible_snapshots(engineer)) == []


def test_reach_says_what_is_support_and_visible_teams_say_in_one_query(teams, django_assert_num_queries):
    """``reach`` (asked once by pages that filter several kinds of rows) agrees
    with ``is_support`` and ``visible_teams`` for every kind of reader."""
    from accounts.access import reach

    bank, telco, _cloud = teams
    alice = User.objects.create_user("alice", password="pw-alice-123")
    add_member(team=bank, user=alice)
    add_member(team=telco, user=alice)
    bob = User.objects.create_user("bob", password="pw-bob-1234")
    add_member(team=bank, user=bob, role="support")
    root = User.objects.create_superuser("root", password="pw-root-1234")
    carol = User.objects.create_user("carol", password="pw-carol-123", is_active=False)
    add_member(team=bank, user=carol, role="admin")
    erin = User.objects.create_user("erin", password="pw-erin-1234")

    for user in (alice, bob, root, carol, erin, AnonymousUser()):
        with django_assert_num_queries(0 if user in (root, carol) or not user.is_authenticated else 1):
            scope = reach(user)
        assert scope.everything == is_support(user)
        assert scope.nothing == (not user.is_authenticated or not user.is_active)
        if not scope.everything:
            assert set(scope.team_ids) == set(visible_teams(user).values_list("pk", flat=True))
