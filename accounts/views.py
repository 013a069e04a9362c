"""Tokens and socket tickets over the API, and the home page's "revoke" control."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import authenticate
from django.contrib.auth.decorators import login_required
from django.contrib.auth.signals import user_logged_in
from django.core.validators import RegexValidator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.revocation import revoke_access
from accounts.tickets import TICKET_SECONDS, issue_ticket
from campaign.errors import DomainError
from campaign.limits import NON_BLANK


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, validators=[RegexValidator(NON_BLANK)])
    password = serializers.CharField(max_length=200, trim_whitespace=False)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class TicketSerializer(serializers.Serializer):
    ticket = serializers.CharField()
    expires_in = serializers.IntegerField(help_text="seconds; the ticket opens one socket")


class BadCredentials(DomainError):
    status = 400
    code = "invalid_credentials"


class TokenView(APIView):
    """POST: the API token for a username and password (login throttling applies);
    DELETE: revoke it (and close my open sockets)."""

    def get_permissions(self):
        if getattr(self.request, "method", None) == "POST":
            return [AllowAny()]
        return super().get_permissions()

    @extend_schema(request=CredentialsSerializer, responses=TokenSerializer, summary="Get a token")
    def post(self, request: Request) -> Response:
        serializer = CredentialsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        # The Django request, so that django-axes counts the failure and locks out (429).
        user = authenticate(request._request, **serializer.validated_data)
        if user is None:
            raise BadCredentials("non_field_errors", _("wrong username or password"))
        # A sign-in like the form's: it clears the account's failures (django-axes) and stamps
        # last_login.
        user_logged_in.send(sender=user.__class__, request=request._request, user=user)
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})

    @extend_schema(request=None, responses={204: None}, summary="Revoke my token")
    def delete(self, request: Request) -> Response:
        revoke_access(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SocketTicketView(APIView):
    @extend_schema(request=None, responses={201: TicketSerializer}, summary="A socket ticket")
    def post(self, request: Request) -> Response:
        return Response(
            {"ticket": issue_ticket(user=request.user), "expires_in": TICKET_SECONDS},
            status=status.HTTP_201_CREATED,
        )


@login_required
@require_POST
def revoke_tokens(request: HttpRequest) -> HttpResponse:
    revoke_access(user=request.user)
    messages.success(request, _("Your API token is revoked and your open live connections closed."))
    return redirect("home")
