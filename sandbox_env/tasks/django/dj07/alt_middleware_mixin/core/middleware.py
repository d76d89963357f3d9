import re
import uuid

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

from core.exceptions import ServiceError


class RequestIDMiddleware(MiddlewareMixin):
    def process_request(self, request):
        given = request.META.get("HTTP_X_REQUEST_ID", "")
        request.request_id = given if re.match(r"^[A-Za-z0-9-]{8,64}\Z", given) else uuid.uuid4().hex

    def process_response(self, request, response):
        response.headers["X-Request-ID"] = request.request_id
        return response


class MaintenanceMiddleware(MiddlewareMixin):
    def process_request(self, request):
        if not getattr(settings, "MAINTENANCE_MODE", False) or request.path.startswith("/health/"):
            return None
        return HttpResponse("maintenance", status=503, headers={"Content-Type": "text/plain", "Retry-After": "120"})


class ServiceErrorMiddleware(MiddlewareMixin):
    def process_exception(self, request, exception):
        if not isinstance(exception, ServiceError):
            return None
        return JsonResponse({"error": exception.code, "detail": str(exception)}, status=exception.status)
