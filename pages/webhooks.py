"""The GM's webhooks page: add one (the secret is shown once), remove one, read the delivery log."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from campaign.errors import DomainError
from campaign.models import Role
from pages.views import member_of_campaign
from webhooks import services
from webhooks.models import Webhook
from webhooks.policy import EVENT_TYPES

LOG = 20


@login_required
@require_http_methods(["GET", "POST"])
def webhooks_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign, membership = member_of_campaign(request, campaign_id)
    if membership.role != Role.GM:
        raise PermissionDenied(_("Only the game master manages webhooks."))
    error = None
    if request.method == "POST":
        try:
            if "delete" in request.POST:
                services.delete_webhook(
                    campaign=campaign, actor=request.user, webhook_id=request.POST["delete"]
                )
                return redirect("webhooks", campaign.pk)
            webhook = services.create_webhook(
                campaign=campaign,
                actor=request.user,
                url=request.POST.get("url", ""),
                event_types=request.POST.getlist("event_types"),
                format=request.POST.get("format", Webhook.Format.JSON),
                language=request.POST.get("language", "ru"),
            )
            messages.success(
                request,
                _("Webhook added. Its signing secret (shown only now): %(secret)s")
                % {"secret": webhook.secret},
            )
            return redirect("webhooks", campaign.pk)
        except DomainError as problem:
            error = problem
    hooks = [
        {"hook": hook, "deliveries": list(hook.deliveries.all()[:LOG])}
        for hook in Webhook.objects.filter(campaign=campaign)
    ]
    return render(
        request,
        "reports/webhooks.html",
        {
            "campaign": campaign,
            "is_gm": True,
            "page_name": "webhooks",
            "hooks": hooks,
            "error": error,
            "event_types": EVENT_TYPES,
            "formats": Webhook.Format.choices,
        },
        status=400 if error else 200,
    )
