from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from config.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path(settings.ADMIN_PATH, admin.site.urls),  # CONVENE_ADMIN_PATH
    path("api/", include("facilitation.api.urls")),
    path("bridge/", include("channels_bridge.urls")),
    path("", include("frontend.urls")),
]
