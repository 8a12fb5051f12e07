"""The response envelope: ``{"success", "data"?, "error"?: {"code", "message", "details"?}, "meta"?}``."""
from django.http import JsonResponse
from rest_framework.response import Response


def ok(data=None, *, meta: dict | None = None, status: int = 200, headers: dict | None = None) -> Response:
    body = {"success": True, "data": data}
    if meta is not None:
        body["meta"] = meta
    return Response(body, status=status, headers=headers)


def error_body(code: str, message: str, details=None) -> dict:
    error = {"code": code, "message": message}
    if details:
        error["details"] = details
    return {"success": False, "error": error}


def error_json(status: int, code: str, message: str, details=None) -> JsonResponse:
    """An error envelope outside DRF (unknown routes, unhandled exceptions)."""
    return JsonResponse(error_body(code, message, details), status=status)
