import json
import re

import pytest
from django.http import HttpResponse
from django.test import Client

from core import views
from core.exceptions import ServiceError
from core.middleware import MaintenanceMiddleware, RequestIDMiddleware, ServiceErrorMiddleware

FRESH = re.compile(r"[0-9a-f]{32}")


class Teapot(ServiceError):
    status = 418
    code = "teapot"


def test_fresh_id_is_a_uuid4_hex(client):
    rid = client.get("/health/")["X-Request-ID"]
    assert len(rid) == 32
    assert FRESH.fullmatch(rid) is not None
    assert rid[12] == "4"


def test_ids_at_both_length_limits_are_kept(client):
    for rid in ("A1b2-C3d", "Z" * 64):
        response = client.get("/who/", headers={"X-Request-ID": rid})
        assert response.json() == {"request_id": rid}
    assert client.get("/who/", headers={"X-Request-ID": "A1b2-C3"})["X-Request-ID"] != "A1b2-C3"


@pytest.mark.parametrize("bad", ["under_score1", "dots.in.the.id", "tab\tinside99", "1234567"])
def test_ids_with_other_characters_get_a_fresh_one(client, bad):
    response = client.get("/who/", headers={"X-Request-ID": bad})
    assert FRESH.fullmatch(response["X-Request-ID"]) is not None
    assert response.json()["request_id"] == response["X-Request-ID"]


def test_view_sees_the_id_that_the_response_carries():
    seen = []

    def view(request):
        seen.append(request.request_id)
        return HttpResponse("ok")

    from django.test import RequestFactory

    response = RequestIDMiddleware(view)(RequestFactory().get("/", headers={"X-Request-ID": "trace-0042"}))
    assert seen == ["trace-0042"]
    assert response["X-Request-ID"] == "trace-0042"


def test_unknown_path_gets_a_fresh_id(client):
    response = client.get("/missing/page/")
    assert response.status_code == 404
    assert FRESH.fullmatch(response["X-Request-ID"]) is not None


def test_maintenance_response_details(client, settings):
    settings.MAINTENANCE_MODE = True
    views.CALLS.clear()
    response = client.post("/ping/", headers={"X-Request-ID": "down-for-now"})
    assert (response.status_code, response.content) == (503, b"maintenance")
    assert response["Retry-After"] == "120"
    assert response["X-Request-ID"] == "down-for-now"
    assert views.CALLS == []


def test_health_prefix_is_a_plain_prefix(client, settings):
    settings.MAINTENANCE_MODE = True
    assert client.get("/health/deep/").content == b"ok"
    assert client.get("/who/").status_code == 503
    assert client.get("/health").status_code == 503


def test_maintenance_can_be_switched_off_again(client, settings):
    settings.MAINTENANCE_MODE = True
    assert client.get("/who/").status_code == 503
    settings.MAINTENANCE_MODE = False
    assert client.get("/ping/").content == b"pong"


def test_maintenance_middleware_alone_does_not_call_the_view(settings, rf):
    settings.MAINTENANCE_MODE = True
    calls = []
    middleware = MaintenanceMiddleware(lambda request: calls.append(1) or HttpResponse("view"))
    response = middleware(rf.get("/anything/"))
    assert response.status_code == 503
    assert calls == []
    assert middleware(rf.get("/health/x/")).content == b"view"


def test_service_error_subclasses_map_to_their_status_and_code(rf):
    response = ServiceErrorMiddleware(lambda r: None).process_exception(rf.get("/"), Teapot("short and stout"))
    assert response.status_code == 418
    assert json.loads(response.content) == {"error": "teapot", "detail": "short and stout"}
    base = ServiceErrorMiddleware(lambda r: None).process_exception(rf.get("/"), ServiceError("boom"))
    assert (base.status_code, json.loads(base.content)) == (500, {"error": "service_error", "detail": "boom"})


def test_forbidden_json_carries_a_fresh_id(client):
    response = client.get("/forbidden/")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert FRESH.fullmatch(response["X-Request-ID"]) is not None


def test_django_500_carries_the_given_id():
    response = Client(raise_request_exception=False).get("/crash/", headers={"X-Request-ID": "boom-boom-1"})
    assert response.status_code == 500
    assert response["X-Request-ID"] == "boom-boom-1"
    assert ServiceErrorMiddleware(lambda r: None).process_exception(None, KeyError("k")) is None
