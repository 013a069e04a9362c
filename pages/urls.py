"""The web pages (mounted at the site root by config/urls.py)."""

from django.urls import path

from pages import reports, views, webhooks

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/signup/", views.signup, name="signup"),
    path("join/<str:code>/", views.join, name="join"),
    path("audit/", views.audit, name="audit"),
    path("campaigns/<int:campaign_id>/", views.campaign_entry, name="campaign"),
    path("campaigns/<int:campaign_id>/gm/", views.gm_dashboard, name="gm"),
    path("campaigns/<int:campaign_id>/play/", views.play, name="play"),
    path("campaigns/<int:campaign_id>/audit/", views.audit, name="campaign-audit"),
    path("campaigns/<int:campaign_id>/report/", reports.luck_page, name="luck-report"),
    path(
        "campaigns/<int:campaign_id>/sessions/<int:number>/report/",
        reports.luck_page,
        name="session-luck-report",
    ),
    path(
        "campaigns/<int:campaign_id>/sessions/<int:number>/chronicle/",
        reports.chronicle_page,
        name="chronicle",
    ),
    path("campaigns/<int:campaign_id>/webhooks/", webhooks.webhooks_page, name="webhooks"),
]
