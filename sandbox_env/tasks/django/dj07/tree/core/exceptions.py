class ServiceError(Exception):
    """An error a view raises on purpose; ServiceErrorMiddleware turns it into a JSON response."""

    status = 500
    code = "service_error"


class ServiceUnavailable(ServiceError):
    status = 503
    code = "unavailable"


class NotAllowed(ServiceError):
    status = 403
    code = "not_allowed"
