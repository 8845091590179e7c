"""``Authorization: Token <key>`` against the hashed keys of ``ApiToken``."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from .models import ApiToken


class HashedTokenAuthentication(TokenAuthentication):
    """DRF's token scheme (same header, same 401 with ``WWW-Authenticate:
    Token``); the key is looked up by its SHA-256, never stored in clear."""

    keyword = "Token"
    model = ApiToken

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(key_hash=ApiToken.hash_key(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return (token.user, token)
