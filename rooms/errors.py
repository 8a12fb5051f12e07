"""Errors raised by actions; views translate them to responses (400, 403, 404, 409)."""


class ActionError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, details: dict | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class ValidationFailed(ActionError):
    status = 400
    code = "validation_error"


class Forbidden(ActionError):
    status = 403
    code = "forbidden"


class NotFound(ActionError):
    status = 404
    code = "not_found"


class StateConflict(ActionError):
    status = 409
    code = "conflict"
