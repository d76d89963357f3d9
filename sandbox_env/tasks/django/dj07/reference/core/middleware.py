import re
import uuid

from django.conf import settings
from django.http import HttpResponse, JsonResponse

from core.exceptions import ServiceError

VALID_ID = re.compile(r"[A-Za-z0-9-]{8,64}")


class RequestIDMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get("X-Request-ID", "")
        request.request_id = incoming if VALID_ID.fullmatch(incoming) else uuid.uuid4().hex
        response = self.get_response(request)
        response["X-Request-ID"] = request.request_id
        return response


class MaintenanceMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if getattr(settings, "MAINTENANCE_MODE", False) and not request.path.startswith("/health/"):
            response = HttpResponse("maintenance", status=503, content_type="text/plain")
            response["Retry-After"] = "120"
            return response
        return self.get_response(request)


class ServiceErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, ServiceError):
            return JsonResponse({"error": exception.code, "detail": str(exception)}, status=exception.status)
        return None
