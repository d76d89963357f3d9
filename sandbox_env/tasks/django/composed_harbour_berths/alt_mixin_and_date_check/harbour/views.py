"""Class-based views; the dates compared before the row is written, so the database never refuses them."""

import datetime

from django.http import Http404, JsonResponse
from django.views import View

from harbour.exceptions import BerthTaken, HarbourError
from harbour.models import Berth, Mooring


def as_json(m):
    return {
        "id": m.id,
        "berth": m.berth.code,
        "vessel": m.vessel,
        "arrives": m.arrives.isoformat(),
        "leaves": m.leaves.isoformat(),
    }


def find_berth(code):
    berth = Berth.objects.filter(code=code.upper()).first()
    if berth is None:
        raise Http404("no such berth")
    return berth


class BerthDetail(View):
    http_method_names = ["get"]

    def get(self, request, code):
        berth = find_berth(code)
        moorings = sorted(berth.moorings.all(), key=lambda m: (m.arrives, m.id))
        return JsonResponse({"code": berth.code, "max_length": berth.max_length, "moorings": [as_json(m) for m in moorings]})


class MooringDetail(View):
    http_method_names = ["get"]

    def get(self, request, pk):
        mooring = Mooring.objects.filter(pk=pk).select_related("berth").first()
        if mooring is None:
            raise Http404("no such mooring")
        return JsonResponse(as_json(mooring))


class Moor(View):
    http_method_names = ["post"]

    def post(self, request, code):
        berth = find_berth(code)
        form = request.POST
        vessel, length = form.get("vessel", "").strip(), form.get("length", "")
        try:
            arrives = datetime.date.fromisoformat(form.get("arrives", ""))
            leaves = datetime.date.fromisoformat(form.get("leaves", ""))
        except ValueError:
            arrives = leaves = None
        if not vessel or not length.isdigit() or arrives is None:
            raise HarbourError("bad_request", "vessel, length, arrives and leaves (YYYY-MM-DD) are required")
        if int(length) > berth.max_length:
            raise HarbourError("too_long", "the vessel is longer than the berth")
        for other in berth.moorings.all():
            if other.arrives < leaves and arrives < other.leaves:
                raise BerthTaken("berth_taken", f"taken by {other.vessel}")
        if not leaves > arrives:
            raise HarbourError("bad_dates", "a vessel leaves after it arrives")
        mooring = Mooring.objects.create(berth=berth, vessel=vessel, length=int(length), arrives=arrives, leaves=leaves)
        return JsonResponse(as_json(mooring), status=201)


berth_detail = BerthDetail.as_view()
mooring_detail = MooringDetail.as_view()
moor = Moor.as_view()
