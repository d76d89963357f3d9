"""The same middleware through the mixin's hooks: the trace set on the request and stamped on the response."""

import string
import uuid

from django.http import JsonResponse
from django.utils.deprecation import MiddlewareMixin

from harbour.exceptions import HarbourError

HEX = set(string.digits + "abcdef")


class HarbourMiddleware(MiddlewareMixin):
    def process_request(self, request):
        given = request.META.get("HTTP_X_TRACE_ID", "")
        request.trace_id = given if len(given) == 32 and set(given) <= HEX else uuid.uuid4().hex

    def process_exception(self, request, exception):
        if not isinstance(exception, HarbourError):
            return None
        return JsonResponse({"error": exception.code, "detail": str(exception)}, status=exception.status)

    def process_response(self, request, response):
        response.headers["X-Trace-ID"] = getattr(request, "trace_id", None) or uuid.uuid4().hex
        return response
