"""Every error under /api/ as the envelope, with its HTTP status.

DRF's own exceptions (validation, authentication, permission, 404, 405, 415,
throttling) and the actions' ``ActionError`` are translated here. Anything else
propagates to ``ApiEnvelopeMiddleware``, which answers a 500 envelope.
"""
from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db.models import ProtectedError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from facilitation.api.envelope import error_body
from rooms.errors import ActionError

CODES = {
    exceptions.ValidationError: ("validation_error", "The request is not valid."),
    exceptions.ParseError: ("parse_error", None),
    exceptions.AuthenticationFailed: ("authentication_failed", None),
    exceptions.NotAuthenticated: ("not_authenticated", None),
    exceptions.PermissionDenied: ("forbidden", None),
    exceptions.NotFound: ("not_found", None),
    exceptions.MethodNotAllowed: ("method_not_allowed", None),
    exceptions.NotAcceptable: ("not_acceptable", None),
    exceptions.UnsupportedMediaType: ("unsupported_media_type", None),
    exceptions.Throttled: ("throttled", None),
}


def _code_and_message(exc: exceptions.APIException) -> tuple[str, str]:
    for cls, (code, message) in CODES.items():
        if isinstance(exc, cls):
            break
    else:
        code, message = getattr(exc, "default_code", "error"), None
    if message is None:
        message = str(exc.detail) if not isinstance(exc.detail, (list, dict)) else str(exc.default_detail)
    return code, message


def api_exception_handler(exc, context):
    if isinstance(exc, ActionError):
        set_rollback()
        return Response(error_body(exc.code, exc.message, exc.details or None), status=exc.status)
    if isinstance(exc, ProtectedError):
        set_rollback()
        return Response(error_body("in_use", "The row is still in use."), status=409)
    if isinstance(exc, ObjectDoesNotExist):
        # A row that passed the access check was deleted by a concurrent request meanwhile.
        set_rollback()
        return Response(error_body("not_found", "Not found (it was just deleted)."), status=404)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    if not isinstance(exc, exceptions.APIException):
        return None
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    details = None
    if isinstance(exc, exceptions.Throttled):
        wait = int(exc.wait or 1)
        headers["Retry-After"] = str(wait)
        details = {"retryAfter": wait}
    elif isinstance(exc.detail, dict):
        details = exc.detail
    elif isinstance(exc.detail, list):
        details = {"nonFieldErrors": exc.detail}
    code, message = _code_and_message(exc)
    set_rollback()
    return Response(error_body(code, message, details), status=exc.status_code, headers=headers)
