from django.urls import path

from accounts import views

api_urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="api-token"),
    path("auth/socket-ticket/", views.SocketTicketView.as_view(), name="api-socket-ticket"),
]

page_urlpatterns = [
    path("accounts/revoke-tokens/", views.revoke_tokens, name="revoke-tokens"),
]
