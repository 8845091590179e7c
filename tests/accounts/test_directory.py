"""Directory sign-in against a real OpenLDAP server (Debian's slapd) that the
test starts itself: a generated slapd.conf with the mdb backend in a temp
directory, an LDIF of people and groups loaded with slapadd, slapd listening
on a free port. Users sign in through the real login form; their groups map
to teams and roles (``LDAP_TEAM_MAP``), and local accounts keep working, also
while the directory is down. Without slapd, or without python-ldap and
django-auth-ldap (the optional ``requirements-ldap.txt``, ``make install-ldap``,
compiled against libldap2-dev/libsasl2-dev), the tests skip locally with that
reason and FAIL with CI=true (``.ci/run`` installs both)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import environ
import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from accounts import services
from accounts.access import is_support
from accounts.models import Membership
from config.ldap import ldap_settings, parse_team_map
from tests.conftest import service_unavailable

pytestmark = [pytest.mark.django_db, pytest.mark.services]

SUFFIX = "dc=casebook,dc=test"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PW = "root-secret-7"
PASSWORDS = {"alice": "alice-pw-31", "bob": "bob-pw-47", "carol": "carol-pw-59", "dave": "dave-pw-61"}
GROUPS = {
    "dba": ["alice", "carol"],
    "dba-leads": ["carol"],
    "support": ["bob"],
    "interns": ["dave"],
}
TEAM_MAP = {
    f"cn=dba,ou=groups,{SUFFIX}": "dba",
    f"cn=DBA-Leads,ou=groups,{SUFFIX}": "dba:admin",  # case differs from the entry: DNs compare as LDAP does
    f"cn=support,ou=groups,{SUFFIX}": "support-desk:support",
}
SLAPD = shutil.which("slapd") or shutil.which("slapd", path="/usr/sbin:/usr/local/sbin")
SLAPADD = shutil.which("slapadd") or shutil.which("slapadd", path="/usr/sbin:/usr/local/sbin")


@pytest.fixture(scope="module", autouse=True)
def _python_ldap_installed():
    """Directory sign-in is an optional extra: ``make test`` on a fresh machine
    has no C compiler for python-ldap. Module-scoped, so it is asked before the
    module-scoped :func:`slapd` (which imports python-ldap) on a machine that
    has slapd but not the Python packages."""
    try:
        import django_auth_ldap  # noqa: F401 - optional (requirements-ldap.txt)
        import ldap  # noqa: F401 - optional (requirements-ldap.txt)
    except ImportError as exc:
        service_unavailable(f"directory sign-in packages not installed ({exc}): run `make install-ldap`")


def ssha(password: str) -> str:
    """The {SSHA} hash slappasswd makes: SHA-1 of password + salt, then the salt."""
    salt = os.urandom(8)
    digest = hashlib.sha1(password.encode() + salt).digest()  # noqa: S324 (OpenLDAP's scheme)
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def ldif() -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: casebook\no: Casebook test\n",
        f"dn: ou=people,{SUFFIX}\nobjectClass: organizationalUnit\nou: people\n",
        f"dn: ou=groups,{SUFFIX}\nobjectClass: organizationalUnit\nou: groups\n",
    ]
    for uid, password in PASSWORDS.items():
        entries.append(
            f"dn: uid={uid},ou=people,{SUFFIX}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
            f"cn: {uid.title()} Example\ngivenName: {uid.title()}\nsn: Example\n"
            f"mail: {uid}@example.org\nuserPassword: {ssha(password)}\n"
        )
    for cn, members in GROUPS.items():
        entries.append(
            f"dn: cn={cn},ou=groups,{SUFFIX}\nobjectClass: groupOfNames\ncn: {cn}\n"
            + "".join(f"member: uid={m},ou=people,{SUFFIX}\n" for m in members)
        )
    return "\n".join(entries)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def slapd(tmp_path_factory):
    if not SLAPD or not SLAPADD:
        service_unavailable("slapd/slapadd not installed (Debian package slapd)")
        return None
    root = tmp_path_factory.mktemp("slapd")
    (root / "db").mkdir()
    schema = Path("/etc/ldap/schema")
    conf = root / "slapd.conf"
    conf.write_text(
        "".join(f"include {schema / name}.schema\n" for name in ("core", "cosine", "inetorgperson", "nis"))
        + f"pidfile {root / 'slapd.pid'}\n"
        "modulepath /usr/lib/ldap\nmoduleload back_mdb\n"
        "database mdb\nmaxsize 16777216\n"
        f'suffix "{SUFFIX}"\nrootdn "{ROOT_DN}"\nrootpw {ROOT_PW}\n'
        f"directory {root / 'db'}\n"
        "access to attrs=userPassword by anonymous auth by self read by * none\n"
        "access to * by * read\n"
    )
    (root / "data.ldif").write_text(ldif())
    subprocess.run([SLAPADD, "-f", str(conf), "-l", str(root / "data.ldif")], check=True, capture_output=True)
    port = free_port()
    uri = f"ldap://127.0.0.1:{port}"
    # -d 0: stay in the foreground (so the fixture owns the process), no debug output.
    proc = subprocess.Popen(
        [SLAPD, "-h", uri, "-f", str(conf), "-d", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    import ldap

    deadline = time.monotonic() + 20
    while True:
        try:
            conn = ldap.initialize(uri)
            conn.simple_bind_s(ROOT_DN, ROOT_PW)
            conn.unbind_s()
            break
        except ldap.LDAPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"slapd did not start on {uri}: {err[-2000:]}")
            time.sleep(0.1)
    yield uri
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def directory(slapd, settings, monkeypatch):
    """Settings as config/settings.py builds them from these environment variables."""
    for name, value in {
        "LDAP_SERVER_URI": slapd,
        "LDAP_BIND_DN": ROOT_DN,
        "LDAP_BIND_PASSWORD": ROOT_PW,
        "LDAP_USER_SEARCH_BASE": f"ou=people,{SUFFIX}",
        "LDAP_GROUP_SEARCH_BASE": f"ou=groups,{SUFFIX}",
        "LDAP_TEAM_MAP": json.dumps(TEAM_MAP),
    }.items():
        monkeypatch.setenv(name, value)
    for name, value in ldap_settings(environ.Env()).items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = [
        "accounts.backends.LockoutBackend",
        "accounts.directory.DirectoryBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    return slapd


def sign_in(username: str, password: str):
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR="192.0.2.44")
    html = client.get("/accounts/login/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = client.post(
        "/accounts/login/", {"username": username, "password": password, "csrfmiddlewaretoken": token}
    )
    return client, response


def roles(user) -> dict[str, str]:
    return dict(Membership.objects.filter(user=user).values_list("team__slug", "role"))


def test_real_ldap_sign_in_through_the_login_form(directory):
    client, response = sign_in("alice", PASSWORDS["alice"])
    assert response.status_code == 302 and response["Location"] == "/"
    page = client.get("/")
    assert page.status_code == 200 and page.wsgi_request.user.username == "alice"
    alice = User.objects.get(username="alice")
    # attributes copied from the directory; no usable local password
    assert (alice.first_name, alice.last_name, alice.email) == ("Alice", "Example", "alice@example.org")
    assert not alice.has_usable_password()
    assert roles(alice) == {"dba": "engineer"}


def test_real_ldap_wrong_password_and_unknown_user_are_refused(directory):
    _, response = sign_in("alice", "not-her-password")
    assert response.status_code == 200 and b"correct username and password" in response.content
    _, response = sign_in("mallory", "anything")
    assert response.status_code == 200
    assert not User.objects.filter(username__in=["alice", "mallory"]).exists()


def test_real_ldap_groups_map_to_teams_and_roles(directory):
    bob = authenticate(None, username="bob", password=PASSWORDS["bob"])
    assert roles(bob) == {"support-desk": "support"} and is_support(bob)
    # two groups naming one team: the higher role wins
    carol = authenticate(None, username="carol", password=PASSWORDS["carol"])
    assert roles(carol) == {"dba": "admin"}
    # a group the map does not name gives no team, and no cross-team access
    dave = authenticate(None, username="dave", password=PASSWORDS["dave"])
    assert dave is not None and roles(dave) == {} and not is_support(dave)


def test_real_ldap_memberships_follow_the_directory(directory):
    alice = authenticate(None, username="alice", password=PASSWORDS["alice"])
    # given by hand: a mapped team she has no group for, and a team the map does not name
    services.add_member(team=services.create_team(name="support-desk"), user=alice, role="support")
    services.add_member(team=services.create_team(name="lab"), user=alice, role="engineer")
    _, response = sign_in("alice", PASSWORDS["alice"])
    assert response.status_code == 302
    assert roles(alice) == {"dba": "engineer", "lab": "engineer"}


def test_real_ldap_local_accounts_keep_working(directory, settings):
    User.objects.create_user("localops", password="local-pw-83")
    client, response = sign_in("localops", "local-pw-83")
    assert response.status_code == 302 and client.get("/").wsgi_request.user.username == "localops"
    # with the directory unreachable, too
    settings.AUTH_LDAP_SERVER_URI = f"ldap://127.0.0.1:{free_port()}"
    _, response = sign_in("localops", "local-pw-83")
    assert response.status_code == 302
    _, response = sign_in("alice", PASSWORDS["alice"])
    assert response.status_code == 200  # a directory user cannot sign in without the directory


def test_ldap_settings_from_the_environment(monkeypatch):
    monkeypatch.delenv("LDAP_SERVER_URI", raising=False)
    assert ldap_settings(environ.Env()) == {}
    monkeypatch.setenv("LDAP_SERVER_URI", "ldap://directory.example:389")
    with pytest.raises(ImproperlyConfigured, match="LDAP_USER_SEARCH_BASE"):
        ldap_settings(environ.Env())
    monkeypatch.setenv("LDAP_USER_DN_TEMPLATE", "uid=%(user)s,ou=people,dc=example,dc=org")
    monkeypatch.setenv("LDAP_GROUP_SEARCH_BASE", "ou=groups,dc=example,dc=org")
    monkeypatch.setenv("LDAP_GROUP_TYPE", "posixGroup")
    monkeypatch.setenv("LDAP_SUPERUSER_GROUP", "cn=root,ou=groups,dc=example,dc=org")
    got = ldap_settings(environ.Env())
    assert got["AUTH_LDAP_USER_DN_TEMPLATE"] == "uid=%(user)s,ou=people,dc=example,dc=org"
    assert type(got["AUTH_LDAP_GROUP_TYPE"]).__name__ == "PosixGroupType"
    assert got["AUTH_LDAP_GROUP_SEARCH"].filterstr == "(objectClass=posixGroup)"
    assert got["AUTH_LDAP_USER_FLAGS_BY_GROUP"] == {"is_superuser": "cn=root,ou=groups,dc=example,dc=org"}
    assert got["CASEBOOK_LDAP_TEAM_MAP"] == {} and got["CASEBOOK_LDAP_MIRROR_TEAMS"] is True


@pytest.mark.parametrize(
    "raw", ['["cn=a"]', '{"cn=a,dc=x": "dba:owner"}', '{"cn=a,dc=x": "bad slug"}', '{"cn=a,dc=x": 3}']
)
def test_a_bad_team_map_stops_the_start(raw):
    with pytest.raises(ImproperlyConfigured):
        parse_team_map(raw)


def test_a_configured_directory_without_python_ldap_stops_the_start(monkeypatch):
    monkeypatch.setenv("LDAP_SERVER_URI", "ldap://directory.example:389")
    monkeypatch.setitem(sys.modules, "ldap", None)  # as if python-ldap were not installed
    with pytest.raises(ImproperlyConfigured, match=r"requirements-ldap\.txt"):
        ldap_settings(environ.Env())
