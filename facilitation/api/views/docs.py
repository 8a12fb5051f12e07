"""GET /api/schema (OpenAPI 3, JSON by default, ``?format=yaml``; any other ``format`` is 400) and GET /api/docs (Swagger UI, offline) and
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
from rest_framework.settings import api_settings

from rooms.errors import ValidationFailed

ASSETS = Path(drf_spectacular_sidecar.__file__).resolve().parent / "static" / "drf_spectacular_sidecar"


class SchemaView(SpectacularAPIView):
    renderer_classes = [OpenApiJsonRenderer, OpenApiJsonRenderer2, OpenApiYamlRenderer, OpenApiYamlRenderer2]
    permission_classes = [AllowAny]

    def perform_content_negotiation(self, request, force=False):
        """``?format=`` names the schema's format: json or yaml (an empty one is the default, JSON). Any other
        is refused, and the refusal is rendered as every API error is, instead of falling back to JSON."""
        fmt = request.query_params.get(api_settings.URL_FORMAT_OVERRIDE)
        if fmt and fmt not in {renderer.format for renderer in self.renderer_classes}:
            if force:  # rendering the refusal below
                renderer = api_settings.DEFAULT_RENDERER_CLASSES[0]()
                return renderer, renderer.media_type
            raise ValidationFailed("Unknown schema format.", {"format": ["Must be json or yaml."]})
        return super().perform_content_negotiation(request, force)


class DocsView(SpectacularSwaggerView):
    url_name = "api-schema"
    permission_classes = [AllowAny]


class RedocView(SpectacularRedocView):
    url_name = "api-schema"
    permission_classes = [AllowAny]
    template_name = "frontend/api_redoc.html"  # without the web fonts from Google


def docs_asset(request, path: str):
    return serve(request, path, document_root=str(ASSETS))
