"""Directory sign-in (LDAP) settings, read from the environment.

``config/settings.py`` calls :func:`ldap_settings`; it returns nothing unless
``LDAP_SERVER_URI`` is set, so the embedded default (``make run`` with only
python3) never imports python-ldap. With the URI set, django-auth-ldap and
python-ldap must be installed (``requirements-ldap.txt``): a configured
directory that cannot be used stops the start with ImproperlyConfigured
rather than leaving every directory user unable to sign in without a word.

Groups map to Casebook teams and roles through ``LDAP_TEAM_MAP``, a JSON
object ``{"<group DN>": "<team slug>[:<role>]"}`` (role ``engineer``,
``support`` or ``admin``; default ``engineer``)::

    >>> parse_team_map('{"cn=DBA,ou=groups,dc=example,dc=org": "dba:support"}')
    {'cn=dba,ou=groups,dc=example,dc=org': ('dba', 'support')}
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.core.exceptions import ImproperlyConfigured

ROLES = ("engineer", "support", "admin")
_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,120}$")
GROUP_TYPES = {
    # objectClass of the group entries -> django-auth-ldap group type class
    "groupOfNames": "GroupOfNamesType",
    "groupOfUniqueNames": "GroupOfUniqueNamesType",
    "posixGroup": "PosixGroupType",
    "nestedGroupOfNames": "NestedGroupOfNamesType",
    "activeDirectory": "ActiveDirectoryGroupType",
}


def normalise_dn(dn: str) -> str:
    """Group DNs compare case-insensitively and without spaces after commas,
    as the directory compares them (django-auth-ldap lower-cases group DNs)."""
    return ",".join(part.strip() for part in dn.split(",")).lower()


def parse_team_map(raw: str | dict) -> dict[str, tuple[str, str]]:
    """``LDAP_TEAM_MAP`` -> {normalised group DN: (team slug, role)}."""
    data = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(data, dict):
        raise ImproperlyConfigured("LDAP_TEAM_MAP must be a JSON object {group DN: 'team[:role]'}")
    out: dict[str, tuple[str, str]] = {}
    for dn, target in data.items():
        if not isinstance(target, str):
            raise ImproperlyConfigured(f"LDAP_TEAM_MAP[{dn!r}] must be 'team-slug[:role]'")
        slug, _, role = target.partition(":")
        role = role or "engineer"
        if not _SLUG.match(slug) or role not in ROLES:
            raise ImproperlyConfigured(
                f"LDAP_TEAM_MAP[{dn!r}] = {target!r}: expected a team slug and one of {', '.join(ROLES)}"
            )
        out[normalise_dn(dn)] = (slug, role)
    return out


def ldap_settings(env) -> dict[str, Any]:
    """The ``AUTH_LDAP_*`` settings (and ``CASEBOOK_LDAP_*`` team mapping) for
    a django-environ ``env``; empty when ``LDAP_SERVER_URI`` is unset."""
    uri = env("LDAP_SERVER_URI", default="")
    if not uri:
        return {}
    try:
        import django_auth_ldap.config as ldap_config  # noqa: PLC0415 - optional (requirements-ldap.txt)
        import ldap  # noqa: PLC0415 - optional (requirements-ldap.txt)
    except ImportError as exc:
        raise ImproperlyConfigured(
            "LDAP_SERVER_URI is set but django-auth-ldap/python-ldap are not installed: "
            "pip install -r requirements-ldap.txt (needs libldap2-dev and libsasl2-dev to build)"
        ) from exc

    out: dict[str, Any] = {
        "AUTH_LDAP_SERVER_URI": uri,
        "AUTH_LDAP_BIND_DN": env("LDAP_BIND_DN", default=""),
        "AUTH_LDAP_BIND_PASSWORD": env("LDAP_BIND_PASSWORD", default=""),
        "AUTH_LDAP_START_TLS": env.bool("LDAP_START_TLS", default=False),
        "AUTH_LDAP_USER_ATTR_MAP": env.dict(
            "LDAP_USER_ATTR_MAP", default={"first_name": "givenName", "last_name": "sn", "email": "mail"}
        ),
        # Group memberships are read at every sign-in, so a change in the
        # directory shows at the next sign-in.
        "AUTH_LDAP_FIND_GROUP_PERMS": False,
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        "AUTH_LDAP_CONNECTION_OPTIONS": {
            ldap.OPT_NETWORK_TIMEOUT: env.float("LDAP_TIMEOUT", default=5.0),
            ldap.OPT_TIMEOUT: env.float("LDAP_TIMEOUT", default=5.0),
            ldap.OPT_REFERRALS: 0,
        },
    }
    template = env("LDAP_USER_DN_TEMPLATE", default="")
    if template:
        out["AUTH_LDAP_USER_DN_TEMPLATE"] = template
    else:
        base = env("LDAP_USER_SEARCH_BASE", default="")
        if not base:
            raise ImproperlyConfigured(
                "set LDAP_USER_SEARCH_BASE (or LDAP_USER_DN_TEMPLATE) with LDAP_SERVER_URI"
            )
        out["AUTH_LDAP_USER_SEARCH"] = ldap_config.LDAPSearch(
            base, ldap.SCOPE_SUBTREE, env("LDAP_USER_FILTER", default="(uid=%(user)s)")
        )

    group_base = env("LDAP_GROUP_SEARCH_BASE", default="")
    if group_base:
        kind = env("LDAP_GROUP_TYPE", default="groupOfNames")
        if kind not in GROUP_TYPES:
            raise ImproperlyConfigured(f"LDAP_GROUP_TYPE must be one of {', '.join(GROUP_TYPES)}")
        object_class = {"nestedGroupOfNames": "groupOfNames", "activeDirectory": "group"}.get(kind, kind)
        out["AUTH_LDAP_GROUP_SEARCH"] = ldap_config.LDAPSearch(
            group_base,
            ldap.SCOPE_SUBTREE,
            env("LDAP_GROUP_FILTER", default=f"(objectClass={object_class})"),
        )
        out["AUTH_LDAP_GROUP_TYPE"] = getattr(ldap_config, GROUP_TYPES[kind])()
        if env("LDAP_REQUIRE_GROUP", default=""):
            out["AUTH_LDAP_REQUIRE_GROUP"] = env("LDAP_REQUIRE_GROUP")
        if env("LDAP_DENY_GROUP", default=""):
            out["AUTH_LDAP_DENY_GROUP"] = env("LDAP_DENY_GROUP")
        flags = {}
        if env("LDAP_STAFF_GROUP", default=""):
            flags["is_staff"] = env("LDAP_STAFF_GROUP")
        if env("LDAP_SUPERUSER_GROUP", default=""):
            flags["is_superuser"] = env("LDAP_SUPERUSER_GROUP")
        if flags:
            out["AUTH_LDAP_USER_FLAGS_BY_GROUP"] = flags
    out["CASEBOOK_LDAP_TEAM_MAP"] = parse_team_map(env("LDAP_TEAM_MAP", default="{}"))
    # Memberships of mapped teams follow the directory (removed when the group
    # is gone); memberships of teams the map does not name are left alone.
    out["CASEBOOK_LDAP_MIRROR_TEAMS"] = env.bool("LDAP_MIRROR_TEAMS", default=True)
    return out
