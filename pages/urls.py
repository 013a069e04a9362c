"""The web pages (mounted at the site root by config/urls.py)."""

from django.urls import path

import config.converters  # noqa: F401  (registers <id:…>)
from pages import reports, views, webhooks

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/signup/", views.signup, name="signup"),
    path("join/<str:code>/", views.join, name="join"),
    path("audit/", views.audit, name="audit"),
    path("campaigns/<id:campaign_id>/", views.campaign_entry, name="campaign"),
    path("campaigns/<id:campaign_id>/gm/", views.gm_dashboard, name="gm"),
    path("campaigns/<id:campaign_id>/play/", views.play, name="play"),
    path("campaigns/<id:campaign_id>/audit/", views.audit, name="campaign-audit"),
    path("campaigns/<id:campaign_id>/report/", reports.luck_page, name="luck-report"),
    path(
        "campaigns/<id:campaign_id>/sessions/<id:number>/report/",
        reports.luck_page,
        name="session-luck-report",
    ),
    path(
        "campaigns/<id:campaign_id>/sessions/<id:number>/chronicle/",
        reports.chronicle_page,
        name="chronicle",
    ),
    path("campaigns/<id:campaign_id>/webhooks/", webhooks.webhooks_page, name="webhooks"),
]
