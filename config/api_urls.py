from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

import config.converters  # noqa: F401  (registers <id:…>)
from accounts.urls import api_urlpatterns as account_urls
from campaign.api import views as campaign_views
from rolls.api import reports as report_views
from rolls.api import views as roll_views
from webhooks import api as webhook_views

# A URL is matched against each pattern in turn: the routes of one campaign share their prefix
# in one include, the checks first, so that a roll's URL is not tried against every route above
# it (resolving …/checks/ took 24 µs, 19 µs so).
one_check = [
    path("", roll_views.CheckDetailView.as_view(), name="api-check"),
    path("again/", roll_views.AgainView.as_view(), name="api-again"),
    path(
        "dramatic-failure/",
        roll_views.DramaticFailureView.as_view(),
        name="api-dramatic-failure",
    ),
    path("fortune/", roll_views.FortuneView.as_view(), name="api-fortune"),
    path("extra-nice/", roll_views.ExtraNiceView.as_view(), name="api-extra-nice"),
    path("reveal/", roll_views.RevealView.as_view(), name="api-reveal"),
]

one_campaign = [
    path("checks/", roll_views.CheckListView.as_view(), name="api-checks"),
    path("checks/<id:seq>/", include(one_check)),
    path("checks/odds/", roll_views.OddsView.as_view(), name="api-odds"),
    path("checks/parse/", roll_views.ParseView.as_view(), name="api-parse"),
    path("", campaign_views.CampaignDetailView.as_view(), name="api-campaign"),
    path("invite/", campaign_views.InviteView.as_view(), name="api-invite"),
    path("members/", campaign_views.MemberListView.as_view(), name="api-members"),
    path("members/<id:user_id>/", campaign_views.MemberDetailView.as_view(), name="api-member"),
    path("characters/", campaign_views.CharacterListView.as_view(), name="api-characters"),
    path(
        "characters/<uuid:character_id>/",
        campaign_views.CharacterDetailView.as_view(),
        name="api-character",
    ),
    path(
        "sheet-template/",
        campaign_views.CampaignSheetTemplateView.as_view(),
        name="api-sheet-template",
    ),
    path(
        "characters/<uuid:character_id>/favourites/",
        campaign_views.FavouriteListView.as_view(),
        name="api-favourites",
    ),
    path(
        "characters/<uuid:character_id>/favourites/<uuid:favourite_id>/",
        campaign_views.FavouriteDetailView.as_view(),
        name="api-favourite",
    ),
    path(
        "characters/<uuid:character_id>/willpower/",
        roll_views.WillpowerRestoreView.as_view(),
        name="api-willpower",
    ),
    path("sessions/", campaign_views.SessionListView.as_view(), name="api-sessions"),
    path("sessions/end/", campaign_views.SessionEndView.as_view(), name="api-session-end"),
    path("chapters/", campaign_views.ChapterListView.as_view(), name="api-chapters"),
    path("chapters/end/", campaign_views.ChapterEndView.as_view(), name="api-chapter-end"),
    path("scenes/", campaign_views.SceneListView.as_view(), name="api-scenes"),
    path("scenes/end/", campaign_views.SceneEndView.as_view(), name="api-scene-end"),
    path("tasks/reset/", roll_views.TaskResetView.as_view(), name="api-task-reset"),
    path("calls/", roll_views.CallListView.as_view(), name="api-calls"),
    path(
        "calls/<uuid:call_id>/close/",
        roll_views.CallCloseView.as_view(),
        name="api-call-close",
    ),
    path("events/", roll_views.EventListView.as_view(), name="api-events"),
    path("state/", roll_views.RuleStateView.as_view(), name="api-state"),
    path("export/", roll_views.ExportView.as_view(), name="api-export"),
    path("export.csv", roll_views.ExportCsvView.as_view(), name="api-export-csv"),
    path("report/", report_views.LuckReportView.as_view(), name="api-luck-report"),
    path(
        "sessions/<id:number>/report/",
        report_views.SessionLuckReportView.as_view(),
        name="api-session-luck-report",
    ),
    path(
        "sessions/<id:number>/chronicle/",
        report_views.ChronicleView.as_view(),
        name="api-chronicle",
    ),
    path("webhooks/", webhook_views.WebhookListView.as_view(), name="api-webhooks"),
    path(
        "webhooks/<id:webhook_id>/",
        webhook_views.WebhookDetailView.as_view(),
        name="api-webhook",
    ),
    path(
        "webhooks/<id:webhook_id>/deliveries/",
        webhook_views.DeliveryListView.as_view(),
        name="api-webhook-deliveries",
    ),
]

urlpatterns = [
    path("campaigns/<id:campaign_id>/", include(one_campaign)),
    path("campaigns/", campaign_views.CampaignListView.as_view(), name="api-campaigns"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    *account_urls,
    path("rules/", campaign_views.RulesView.as_view(), name="api-rules"),
    path(
        "sheet-templates/", campaign_views.SheetTemplatesView.as_view(), name="api-sheet-templates"
    ),
    path("join/", campaign_views.JoinView.as_view(), name="api-join"),
]
