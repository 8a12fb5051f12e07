"""GET /api/schema (OpenAPI 3, JSON by default, ``?format=yaml``) and GET /api/docs (Swagger UI, offline) and
GET /api/redoc (ReDoc, without its web fonts).

The UI's JavaScript and CSS come from the ``drf-spectacular-sidecar`` package and are
served here, under /api/docs/assets/, so the docs work without any CDN and without
collecting static files.
"""
from pathlib import Path

import drf_spectacular_sidecar
from django.views.static import serve
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2, OpenApiYamlRenderer, OpenApiYamlRenderer2
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

ASSETS = Path(drf_spectacular_sidecar.__file__).resolve().parent / "static" / "drf_spectacular_sidecar"


class SchemaView(SpectacularAPIView):
    renderer_classes = [OpenApiJsonRenderer, OpenApiJsonRenderer2, OpenApiYamlRenderer, OpenApiYamlRenderer2]
    permission_classes = [AllowAny]


class DocsView(SpectacularSwaggerView):
    url_name = "api-schema"
    permission_classes = [AllowAny]


class RedocView(SpectacularRedocView):
    url_name = "api-schema"
    permission_classes = [AllowAny]
    template_name = "frontend/api_redoc.html"  # without the web fonts from Google


def docs_asset(request, path: str):
    return serve(request, path, document_root=str(ASSETS))
