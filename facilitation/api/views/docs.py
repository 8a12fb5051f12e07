"""GET /api/schema (OpenAPI 3, JSON by default, ``?format=yaml``; any other ``format`` is 400),
GET /api/docs (Swagger UI, offline) and GET /api/redoc (ReDoc, without its web fonts and its logo).

The UI's JavaScript and CSS come from the ``drf-spectacular-sidecar`` package and are
served here, under /api/docs/assets/, so the docs work without any CDN and without
collecting static files.
"""
import mimetypes
import posixpath
from functools import lru_cache
from pathlib import Path

import drf_spectacular_sidecar
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.http import http_date
from django.views.static import serve, was_modified_since
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2, OpenApiYamlRenderer, OpenApiYamlRenderer2
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny
from rest_framework.settings import api_settings

from rooms.errors import ValidationFailed

ASSETS = Path(drf_spectacular_sidecar.__file__).resolve().parent / "static" / "drf_spectacular_sidecar"

#: ReDoc's sidebar footer ("API docs by Redocly") shows a logo from cdn.redoc.ly, which the docs pages'
#: Content-Security-Policy refuses, and no option of this ReDoc hides it (``hideLogo`` is only in its schema
#: of options). The bundle is served with that address replaced by a blank image of the logo's size, inline
#: (the policy's ``img-src`` takes ``data:``), so the page fetches nothing from elsewhere.
REDOC_BUNDLE = "redoc/bundles/redoc.standalone.js"
REDOC_LOGO = b'"https://cdn.redoc.ly/redoc/logo-mini.svg"'
BLANK_LOGO = b'"data:image/svg+xml,%3Csvg%20xmlns=%27http://www.w3.org/2000/svg%27%20viewBox=%270%200%201%201%27/%3E"'


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


@lru_cache(maxsize=1)
def _redoc_bundle(mtime: float) -> bytes:
    """The ReDoc bundle without the logo's outside address (read again when the file changes)."""
    return (ASSETS / REDOC_BUNDLE).read_bytes().replace(REDOC_LOGO, BLANK_LOGO)


def docs_asset(request, path: str):
    if posixpath.normpath(path).lstrip("/") != REDOC_BUNDLE:
        return serve(request, path, document_root=str(ASSETS))
    mtime = (ASSETS / REDOC_BUNDLE).stat().st_mtime
    if not was_modified_since(request.META.get("HTTP_IF_MODIFIED_SINCE"), mtime):
        return HttpResponseNotModified()
    response = HttpResponse(_redoc_bundle(mtime), content_type=mimetypes.guess_type(REDOC_BUNDLE)[0])
    response.headers["Last-Modified"] = http_date(mtime)
    return response
