"""Keeps every response under /api/ in the envelope, even where DRF does not run.

Unknown routes (Django's 404 page), unhandled exceptions (500) and any other
non-JSON error page under ``/api/`` are replaced by an error envelope. Successful
non-JSON answers (exports, the schema, the docs page) pass through untouched. Add it near
the top of ``MIDDLEWARE`` so it sees the final response.

No JSON answer is kept in a cache: it is one person's view of rooms that change. Without it a
browser going Back to a page reads that page's requests from its cache, and the list shows a
discussion as it was (a draft that has since started, a name since changed).
"""
import logging

from django.conf import settings
from django.core.exceptions import BadRequest, PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, JsonResponse
from django.utils.cache import add_never_cache_headers

from facilitation.api.envelope import error_json

log = logging.getLogger("convene.api")

PREFIX = "/api/"

MESSAGES = {
    400: ("bad_request", "The request is not valid."),
    401: ("not_authenticated", "Authentication credentials were not provided."),
    403: ("forbidden", "You do not have permission to perform this action."),
    404: ("not_found", "Not found."),
    405: ("method_not_allowed", "Method not allowed."),
    413: ("too_large", "The request is too large."),
    500: ("server_error", "An unexpected error occurred."),
}


def _is_api(request) -> bool:
    path = request.path_info
    return path.startswith(PREFIX) or path == PREFIX.rstrip("/")


def _is_json(response) -> bool:
    return isinstance(response, JsonResponse) or response.get("Content-Type", "").startswith("application/json")


def _without_options(allow: str) -> str:
    """An ``Allow`` header without OPTIONS: no route under /api/ answers it (405; there is no metadata page),
    though DRF lists it on every view."""
    return ", ".join(m for m in (part.strip() for part in allow.split(",")) if m and m.upper() != "OPTIONS")


class ApiEnvelopeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not _is_api(request):
            return response
        if response.status_code >= 400 and not _is_json(response):
            code, message = MESSAGES.get(response.status_code, ("error", response.reason_phrase or "Error."))
            replaced = error_json(response.status_code, code, message)
            for header in ("Allow", "Retry-After", "WWW-Authenticate"):
                if header in response:
                    replaced[header] = response[header]
            response = replaced
        if "Allow" in response:
            response["Allow"] = _without_options(response["Allow"])
        if _is_json(response) and "Cache-Control" not in response:
            add_never_cache_headers(response)
        return response

    def process_exception(self, request, exception):
        if _is_api(request) and isinstance(exception, RequestDataTooBig):  # over Django's own cap: as over ours
            return error_json(413, "too_large", f"The request body is larger than {settings.API_MAX_BODY_BYTES} bytes.")
        if not _is_api(request) or isinstance(exception, (Http404, PermissionDenied, BadRequest, SuspiciousOperation)):
            return None  # Django answers these with their status; __call__ wraps the page
        log.exception("unhandled error in %s %s", request.method, request.path)
        return error_json(500, "server_error", "An unexpected error occurred.")
