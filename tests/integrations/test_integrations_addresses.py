"""Webhook addresses (SSRF): real receivers on this machine's loopback and
private addresses are refused by default and reached only when listed in
``CASEBOOK_WEBHOOK_ALLOW``; redirects are not followed; the delivery log
shows a receiver's status line, never its answer's body. Nothing is ever sent
to an address that is not on this machine."""

from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from accounts.models import Team
from integrations import services
from integrations.models import Delivery, Event
from tests.integrations.receiver import PRIVATE_BODY, Receiver

pytestmark = pytest.mark.django_db(transaction=True)

# A private address given to this machine's loopback interface for the test.
PRIVATE_ADDRESS = "10.213.29.7"


@pytest.fixture
def team(settings):
    settings.CASEBOOK_WEBHOOK_ALLOW = []
    return Team.objects.create(name="Team A", slug="team-a")


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def private_address():
    """``PRIVATE_ADDRESS`` (a /32) on the loopback interface (needs ``ip``
    and root): traffic to it never leaves this machine."""
    if not shutil.which("ip"):
        pytest.skip("no ip command to put a private address on this machine")
    made = _ip("addr", "add", f"{PRIVATE_ADDRESS}/32", "dev", "lo")
    if made.returncode and "File exists" not in made.stderr:
        pytest.skip(f"cannot add a private address: {made.stderr.strip()}")
    try:
        yield PRIVATE_ADDRESS
    finally:
        _ip("addr", "del", f"{PRIVATE_ADDRESS}/32", "dev", "lo")


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.fixture(params=["127.0.0.1", "::1", "localhost", "10.x"])
def local_receiver(request):
    """(receiver, its URL, the allow-list entry that lets it in)."""
    if request.param == "::1" and not _ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    if request.param == "10.x":
        host = request.getfixturevalue("private_address")
        receiver = Receiver(host=host).start()
        url, allow = receiver.url, "10.213.29.0/24"
    elif request.param == "localhost":
        receiver = Receiver().start()
        url, allow = f"http://localhost:{receiver.port}/hook", "localhost"
    else:
        receiver = Receiver(host=request.param).start()
        url, allow = receiver.url, request.param
    yield receiver, url, allow
    receiver.stop()


def test_a_local_receiver_is_refused_by_default_and_reached_when_listed(team, local_receiver, settings):
    receiver, url, allow = local_receiver
    with pytest.raises(services.InvalidWebhookURL, match="CASEBOOK_WEBHOOK_ALLOW"):
        services.create_webhook(team=team, url=url, events=[Event.ANALYSIS_DONE])

    settings.CASEBOOK_WEBHOOK_ALLOW = [allow]
    hook = services.create_webhook(team=team, url=url, events=[Event.ANALYSIS_DONE])
    services.send_test(webhook=hook)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code) == ("delivered", 200)
    assert len(receiver.received) == 1

    # Taken off the list again: the saved webhook is refused before any POST.
    settings.CASEBOOK_WEBHOOK_ALLOW = []
    second = services.send_test(webhook=hook)
    second.refresh_from_db()
    assert (second.status, second.status_code, second.attempts) == ("failed", None, 1)
    assert len(receiver.received) == 1


def test_a_name_is_reached_on_the_checked_address_that_listens(team, settings, monkeypatch):
    """Stock Debian resolves ``localhost`` to ::1 first; a receiver listening
    on 127.0.0.1 only was refused ("Connection refused") when only the first
    checked address was tried. Every address the name resolves to is checked,
    then tried in order, as a connection to the name would be."""
    receiver = Receiver().start()  # 127.0.0.1 only
    try:
        nothing_listens = ("127.0.0.3", receiver.port)  # loopback, no listener on this port
        answers = [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", nothing_listens),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", receiver.port)),
        ]
        monkeypatch.setattr(services.socket, "getaddrinfo", lambda *args, **kwargs: answers)
        settings.CASEBOOK_WEBHOOK_ALLOW = ["127.0.0.0/8"]
        url = f"http://receiver.internal:{receiver.port}/hook"
        assert services.resolve_target(url).addresses == ("127.0.0.3", "127.0.0.1")
        hook = services.create_webhook(team=team, url=url, events=[Event.ANALYSIS_DONE])
        services.send_test(webhook=hook)
        delivery = Delivery.objects.get()
        assert (delivery.status, delivery.status_code) == ("delivered", 200)
        assert len(receiver.received) == 1
    finally:
        receiver.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.2:9/",
        "http://[::1]:9/",
        "http://[::ffff:127.0.0.1]:9/",  # IPv4-mapped IPv6
        "http://[::ffff:a9fe:a9fe]/",  # 169.254.169.254, mapped
        "http://10.0.0.1:9/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",  # CGNAT
        "http://169.254.169.254/latest/meta-data/",
        "http://168.63.129.16/machine",  # Azure wireserver: a public-looking address
        "http://[fd00:ec2::254]/",
        "http://[fc00::1]/",
        "http://224.0.0.1/",
        "http://0.0.0.0:8080/",
        "http://[::]/",
        "http://240.0.0.1/",
    ],
)
def test_internal_and_metadata_addresses_are_refused(team, url):
    with pytest.raises(services.InvalidWebhookURL):
        services.create_webhook(team=team, url=url, events=[Event.ANALYSIS_DONE])


def test_listing_one_network_does_not_open_the_metadata_address(team, settings):
    settings.CASEBOOK_WEBHOOK_ALLOW = ["10.0.0.0/8"]
    assert services.create_webhook(team=team, url="http://10.1.2.3/hook", events=[Event.ANALYSIS_DONE]).pk
    for url in ("http://169.254.169.254/", "http://127.0.0.1/", "http://168.63.129.16/"):
        with pytest.raises(services.InvalidWebhookURL):
            services.create_webhook(team=team, url=url, events=[Event.ANALYSIS_DONE])


def test_a_redirect_is_not_followed_and_its_body_not_shown(team, settings):
    receiver = Receiver(statuses=[302]).start()
    try:
        settings.CASEBOOK_WEBHOOK_ALLOW = ["127.0.0.1"]
        hook = services.create_webhook(team=team, url=receiver.url, events=[Event.ANALYSIS_DONE])
        services.send_test(webhook=hook)
    finally:
        receiver.stop()
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("failed", 302, 1)
    assert [r.path for r in receiver.received] == ["/hook"]  # /elsewhere never asked
    assert delivery.error == "HTTP 302 Found"


def test_the_log_shows_the_status_line_never_the_answers_body(team, settings):
    receiver = Receiver(statuses=[403]).start()
    try:
        settings.CASEBOOK_WEBHOOK_ALLOW = ["127.0.0.1"]
        hook = services.create_webhook(team=team, url=receiver.url, events=[Event.ANALYSIS_DONE])
        services.send_test(webhook=hook)
    finally:
        receiver.stop()
    delivery = Delivery.objects.get()
    assert delivery.error == "HTTP 403 Forbidden"
    assert PRIVATE_BODY.decode() not in str(delivery.attempt_log)
