from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

import config.converters  # noqa: F401  (registers <id:…>)
from accounts.urls import api_urlpatterns as account_urls
from campaign.api import views as campaign_views
from rolls.api import reports as report_views
from rolls.api import views as roll_views
from webhooks import api as webhook_views

C = "campaigns/<id:campaign_id>"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    *account_urls,
    path("rules/", campaign_views.RulesView.as_view(), name="api-rules"),
    path(
        "sheet-templates/", campaign_views.SheetTemplatesView.as_view(), name="api-sheet-templates"
    ),
    path("join/", campaign_views.JoinView.as_view(), name="api-join"),
    path("campaigns/", campaign_views.CampaignListView.as_view(), name="api-campaigns"),
    path(f"{C}/", campaign_views.CampaignDetailView.as_view(), name="api-campaign"),
    path(f"{C}/invite/", campaign_views.InviteView.as_view(), name="api-invite"),
    path(f"{C}/members/", campaign_views.MemberListView.as_view(), name="api-members"),
    path(
        f"{C}/members/<id:user_id>/", campaign_views.MemberDetailView.as_view(), name="api-member"
    ),
    path(f"{C}/characters/", campaign_views.CharacterListView.as_view(), name="api-characters"),
    path(
        f"{C}/characters/<uuid:character_id>/",
        campaign_views.CharacterDetailView.as_view(),
        name="api-character",
    ),
    path(
        f"{C}/sheet-template/",
        campaign_views.CampaignSheetTemplateView.as_view(),
        name="api-sheet-template",
    ),
    path(
        f"{C}/characters/<uuid:character_id>/favourites/",
        campaign_views.FavouriteListView.as_view(),
        name="api-favourites",
    ),
    path(
        f"{C}/characters/<uuid:character_id>/favourites/<uuid:favourite_id>/",
        campaign_views.FavouriteDetailView.as_view(),
        name="api-favourite",
    ),
    path(f"{C}/sessions/", campaign_views.SessionListView.as_view(), name="api-sessions"),
    path(f"{C}/sessions/end/", campaign_views.SessionEndView.as_view(), name="api-session-end"),
    path(f"{C}/chapters/", campaign_views.ChapterListView.as_view(), name="api-chapters"),
    path(f"{C}/chapters/end/", campaign_views.ChapterEndView.as_view(), name="api-chapter-end"),
    path(f"{C}/scenes/", campaign_views.SceneListView.as_view(), name="api-scenes"),
    path(f"{C}/scenes/end/", campaign_views.SceneEndView.as_view(), name="api-scene-end"),
    path(f"{C}/checks/", roll_views.CheckListView.as_view(), name="api-checks"),
    path(f"{C}/checks/odds/", roll_views.OddsView.as_view(), name="api-odds"),
    path(f"{C}/checks/parse/", roll_views.ParseView.as_view(), name="api-parse"),
    path(f"{C}/checks/<id:seq>/again/", roll_views.AgainView.as_view(), name="api-again"),
    path(f"{C}/checks/<id:seq>/", roll_views.CheckDetailView.as_view(), name="api-check"),
    path(
        f"{C}/checks/<id:seq>/dramatic-failure/",
        roll_views.DramaticFailureView.as_view(),
        name="api-dramatic-failure",
    ),
    path(f"{C}/checks/<id:seq>/fortune/", roll_views.FortuneView.as_view(), name="api-fortune"),
    path(
        f"{C}/checks/<id:seq>/extra-nice/",
        roll_views.ExtraNiceView.as_view(),
        name="api-extra-nice",
    ),
    path(f"{C}/checks/<id:seq>/reveal/", roll_views.RevealView.as_view(), name="api-reveal"),
    path(
        f"{C}/characters/<uuid:character_id>/willpower/",
        roll_views.WillpowerRestoreView.as_view(),
        name="api-willpower",
    ),
    path(f"{C}/tasks/reset/", roll_views.TaskResetView.as_view(), name="api-task-reset"),
    path(f"{C}/calls/", roll_views.CallListView.as_view(), name="api-calls"),
    path(
        f"{C}/calls/<uuid:call_id>/close/",
        roll_views.CallCloseView.as_view(),
        name="api-call-close",
    ),
    path(f"{C}/events/", roll_views.EventListView.as_view(), name="api-events"),
    path(f"{C}/state/", roll_views.RuleStateView.as_view(), name="api-state"),
    path(f"{C}/export/", roll_views.ExportView.as_view(), name="api-export"),
    path(f"{C}/export.csv", roll_views.ExportCsvView.as_view(), name="api-export-csv"),
    path(f"{C}/report/", report_views.LuckReportView.as_view(), name="api-luck-report"),
    path(
        f"{C}/sessions/<id:number>/report/",
        report_views.SessionLuckReportView.as_view(),
        name="api-session-luck-report",
    ),
    path(
        f"{C}/sessions/<id:number>/chronicle/",
        report_views.ChronicleView.as_view(),
        name="api-chronicle",
    ),
    path(f"{C}/webhooks/", webhook_views.WebhookListView.as_view(), name="api-webhooks"),
    path(
        f"{C}/webhooks/<id:webhook_id>/",
        webhook_views.WebhookDetailView.as_view(),
        name="api-webhook",
    ),
    path(
        f"{C}/webhooks/<id:webhook_id>/deliveries/",
        webhook_views.DeliveryListView.as_view(),
        name="api-webhook-deliveries",
    ),
]
