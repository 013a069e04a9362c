from django.contrib import admin
from django.urls import include, path

from accounts.urls import page_urlpatterns as account_pages
from config.health import health

urlpatterns = [
    path("admin/", admin.site.urls),
    *account_pages,
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("health/", health, name="health"),
    path("api/", include("config.api_urls")),
    path("", include("pages.urls")),
]
