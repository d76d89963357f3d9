import uuid

from django.conf import settings
from django.http import HttpResponse, JsonResponse


class RequestIDMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        response = self.get_response(request)
        if response.status_code == 200:
            response["X-Request-ID"] = request.request_id
        return response


class MaintenanceMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.on = settings.MAINTENANCE_MODE  # read once: later switches are missed

    def __call__(self, request):
        if self.on and request.path != "/health/":
            return HttpResponse("maintenance", status=503)
        return self.get_response(request)


class ServiceErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        return JsonResponse({"error": "error", "detail": str(exception)}, status=500)
