"""Directory sign-in: django-auth-ldap's backend plus Casebook's group ->
team/role mapping. Only listed in AUTHENTICATION_BACKENDS when
``LDAP_SERVER_URI`` is set (``config.ldap``), so python-ldap is needed only then."""

from __future__ import annotations

from django.conf import settings
from django_auth_ldap.backend import LDAPBackend

from . import services


class DirectoryBackend(LDAPBackend):
    """Signs users in against the directory; after a successful bind their
    team memberships follow their groups (``LDAP_TEAM_MAP``). A user the
    directory does not know, or a directory that does not answer, falls
    through to the next backend: local accounts keep working."""

    def authenticate_ldap_user(self, ldap_user, password):
        user = super().authenticate_ldap_user(ldap_user, password)
        team_map = getattr(settings, "CASEBOOK_LDAP_TEAM_MAP", {})
        if user is not None and team_map and getattr(settings, "AUTH_LDAP_GROUP_SEARCH", None):
            services.sync_directory_teams(
                user=user,
                group_dns=ldap_user.group_dns,
                team_map=team_map,
                mirror=getattr(settings, "CASEBOOK_LDAP_MIRROR_TEAMS", True),
            )
        return user
