import re

import pytest
from django.http import HttpResponse
from django.test import Client

from core import views
from core.middleware import RequestIDMiddleware, ServiceErrorMiddleware

HEX32 = re.compile(r"[0-9a-f]{32}")


def test_plain_response_gets_a_fresh_id(client):
    response = client.get("/ping/")
    assert response.status_code == 200
    assert response.content == b"pong"
    assert HEX32.fullmatch(response["X-Request-ID"])


def test_valid_incoming_id_is_kept_and_seen_by_the_view(client):
    response = client.get("/who/", headers={"X-Request-ID": "abc-12345678"})
    assert response["X-Request-ID"] == "abc-12345678"
    assert response.json() == {"request_id": "abc-12345678"}


@pytest.mark.parametrize("bad", ["short", "has spaces in it", "x" * 65, "semi;colon1234", ""])
def test_invalid_incoming_ids_are_replaced(client, bad):
    response = client.get("/who/", headers={"X-Request-ID": bad})
    assert HEX32.fullmatch(response["X-Request-ID"])
    assert response.json() == {"request_id": response["X-Request-ID"]}


def test_each_request_gets_its_own_id(client):
    ids = {client.get("/ping/")["X-Request-ID"] for _ in range(5)}
    assert len(ids) == 5


def test_not_found_carries_the_id(client):
    response = client.get("/nowhere/", headers={"X-Request-ID": "lost-and-found"})
    assert response.status_code == 404
    assert response["X-Request-ID"] == "lost-and-found"


def test_middleware_works_when_called_directly(rf):
    middleware = RequestIDMiddleware(lambda request: HttpResponse("direct"))
    response = middleware(rf.get("/", headers={"X-Request-ID": "ABCDEFGH-1"}))
    assert response["X-Request-ID"] == "ABCDEFGH-1"


def test_maintenance_answers_503_without_calling_the_view(client, settings):
    settings.MAINTENANCE_MODE = True
    views.CALLS.clear()
    response = client.get("/ping/", headers={"X-Request-ID": "maint-0001"})
    assert response.status_code == 503
    assert response.content == b"maintenance"
    assert response["Content-Type"].startswith("text/plain")
    assert response["Retry-After"] == "120"
    assert response["X-Request-ID"] == "maint-0001"
    assert views.CALLS == []


def test_health_paths_stay_up_during_maintenance(client, settings):
    settings.MAINTENANCE_MODE = True
    assert client.get("/health/").status_code == 200
    assert client.get("/health/deep/").status_code == 200
    assert client.get("/healthz/").status_code == 503


def test_maintenance_setting_is_read_at_each_request(client, settings):
    assert client.get("/ping/").status_code == 200
    settings.MAINTENANCE_MODE = True
    assert client.get("/ping/").status_code == 503
    settings.MAINTENANCE_MODE = False
    assert client.get("/ping/").status_code == 200


def test_service_errors_become_json(client):
    response = client.get("/unavailable/", headers={"X-Request-ID": "svc-err-01"})
    assert response.status_code == 503
    assert response.json() == {"error": "unavailable", "detail": "database is down"}
    assert response["X-Request-ID"] == "svc-err-01"
    response = client.get("/forbidden/")
    assert response.status_code == 403
    assert response.json() == {"error": "not_allowed", "detail": "no entry"}


def test_other_exceptions_are_left_to_django():
    client = Client(raise_request_exception=False)
    response = client.get("/crash/", headers={"X-Request-ID": "crash-0001"})
    assert response.status_code == 500
    assert not response["Content-Type"].startswith("application/json")
    assert response["X-Request-ID"] == "crash-0001"
    assert ServiceErrorMiddleware(lambda r: None).process_exception(None, ValueError("x")) is None
