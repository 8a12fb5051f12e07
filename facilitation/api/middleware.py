"""Keeps every response under /api/ in the envelope, even where DRF does not run.

Unknown routes (Django's 404 page), unhandled exceptions (500) and any other
non-JSON error page under ``/api/`` are replaced by an error envelope. Successful
non-JSON answers (exports, the schema, the docs page) pass through untouched. Add it near
the top of ``MIDDLEWARE`` so it sees the final response.

No JSON answer is kept in a cache: it is one person's view of rooms that change. Without it a
browser going Back to a page reads that page's requests from its cache, and the list shows a
discussion as it was (a draft that has since started, a name since changed).

A body sent without ``Content-Length`` (``Transfer-Encoding: chunked``, as clients that stream a body send
it) is read like any other: DRF reads a body only when that header gives its size, so such a PATCH was
answered 200 having changed nothing, and such a POST refused for fields it did send. Over
``API_MAX_BODY_BYTES`` it is 413 ``too_large``, as a body that says its size is.
"""
import io
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


def _read_chunked_body(request):
    """Reads a chunked body in full and gives the request its length; an error answer when it is too large."""
    meta = request.META
    if meta.get("CONTENT_LENGTH") or "chunked" not in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
        return None
    limit = settings.API_MAX_BODY_BYTES
    body = request.read(limit + 1)
    if len(body) > limit:
        return error_json(413, "too_large", f"The request body is larger than {limit} bytes.")
    request._body = body  # what ``request.body`` answers once the stream was read
    request._stream = io.BytesIO(body)
    meta["CONTENT_LENGTH"] = str(len(body))
    return None


def _without_options(allow: str) -> str:
    """An ``Allow`` header without OPTIONS: no route under /api/ answers it (405; there is no metadata page),
    though DRF lists it on every view."""
    return ", ".join(m for m in (part.strip() for part in allow.split(",")) if m and m.upper() != "OPTIONS")


class ApiEnvelopeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        refused = _read_chunked_body(request) if _is_api(request) else None
        response = refused if refused is not None else self.get_response(request)
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
