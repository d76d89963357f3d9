import re
import uuid

from django.http import JsonResponse

from harbour.exceptions import HarbourError

TRACE = re.compile(r"[a-f0-9]{32}")


class HarbourMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Trace-ID", "")
        request.trace_id = given if TRACE.fullmatch(given) else uuid.uuid4().hex
        response = self.get_response(request)
        response["X-Trace-ID"] = request.trace_id
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, HarbourError):
            return JsonResponse({"error": exception.code, "detail": str(exception)}, status=exception.status)
        return None
