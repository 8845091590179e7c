"""Sign-in lockout (django-axes, accounts.backends): 10 wrong passwords for an
account from one address lock that account from that address (a stranger
cannot lock someone else out), 10 from one address across accounts lock that
address, and CASEBOOK_LOGIN_ACCOUNT_LIMIT from any addresses lock the account
everywhere, for the cool-off period, with a page that says so."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-9"


@pytest.fixture
def eve(db, settings):
    return User.objects.create_user("eve", password=PASSWORD)


def sign_in(username: str, password: str, address: str = "192.0.2.10"):
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)
    html = client.get("/accounts/login/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = client.post(
        "/accounts/login/", {"username": username, "password": password, "csrfmiddlewaretoken": token}
    )
    return client, response


def test_ten_wrong_passwords_lock_the_account_from_that_address_only(eve, settings):
    assert settings.CASEBOOK_LOGIN_FAILURE_LIMIT == 10
    codes = [sign_in("eve", f"wrong-{i}", address="198.51.100.1")[1].status_code for i in range(10)]
    assert codes[:9] == [200] * 9  # the form again, "enter a correct username and password"
    assert codes[9] == 429
    # Locked from there: even the right password is refused.
    _, response = sign_in("eve", PASSWORD, address="198.51.100.1")
    assert response.status_code == 429
    html = response.content.decode()
    assert "Sign-in locked" in html and "after 10 failed attempts" in html
    assert "Try again in 15 minutes" in html and response["Retry-After"] == "900"
    assert 'class="site-header"' in html  # the styled page, not axes' plain text
    # Whoever guessed did not lock eve out: from her own address she signs in.
    client, response = sign_in("eve", PASSWORD, address="203.0.113.7")
    assert response.status_code == 302 and client.get("/").status_code == 200


def test_wrong_passwords_from_many_addresses_lock_the_account_at_its_ceiling(eve, settings):
    settings.CASEBOOK_LOGIN_ACCOUNT_LIMIT = 20
    for i in range(19):  # 19 addresses, one failure each: under both limits
        assert sign_in("eve", f"wrong-{i}", address=f"198.51.100.{i}")[1].status_code == 200
    assert sign_in("eve", "wrong-19", address="198.51.100.19")[1].status_code == 429
    assert sign_in("eve", PASSWORD, address="203.0.113.9")[1].status_code == 429


def test_lock_ends_after_the_cool_off(eve, settings):
    from axes.models import AccessAttempt
    from django.utils import timezone

    for i in range(10):
        sign_in("eve", f"wrong-{i}")
    assert sign_in("eve", PASSWORD)[1].status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME)
    client, response = sign_in("eve", PASSWORD)
    assert response.status_code == 302 and client.get("/").status_code == 200


def test_ten_wrong_passwords_from_one_address_lock_that_address(eve):
    for i in range(10):
        sign_in(f"nobody-{i}", "guess", address="192.0.2.99")
    assert sign_in("eve", PASSWORD, address="192.0.2.99")[1].status_code == 429
    # The account itself is not locked: from elsewhere it signs in.
    _client, response = sign_in("eve", PASSWORD, address="192.0.2.100")
    assert response.status_code == 302


def test_a_good_sign_in_resets_the_count(eve):
    for i in range(9):
        sign_in("eve", f"wrong-{i}")
    assert sign_in("eve", PASSWORD)[1].status_code == 302
    for i in range(9):
        assert sign_in("eve", f"again-{i}")[1].status_code == 200
