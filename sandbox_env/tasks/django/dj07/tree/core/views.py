from django.http import HttpResponse, JsonResponse

from core.exceptions import NotAllowed, ServiceUnavailable

CALLS = []


def ping(request):
    CALLS.append("ping")
    return HttpResponse("pong", content_type="text/plain")


def who(request):
    return JsonResponse({"request_id": getattr(request, "request_id", None)})


def health(request):
    return HttpResponse("ok", content_type="text/plain")


def unavailable(request):
    raise ServiceUnavailable("database is down")


def forbidden(request):
    raise NotAllowed("no entry")


def crash(request):
    raise RuntimeError("a bug")
