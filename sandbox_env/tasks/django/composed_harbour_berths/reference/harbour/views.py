import datetime

from django.db import IntegrityError, transaction
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET, require_POST

from harbour.exceptions import BerthTaken, HarbourError
from harbour.models import Berth, Mooring


def _date(request, name):
    try:
        return datetime.date.fromisoformat(request.POST.get(name, ""))
    except ValueError:
        raise HarbourError("bad_request", f"{name} must be a date YYYY-MM-DD") from None


def _mooring(m):
    return {"id": m.pk, "berth": m.berth.code, "vessel": m.vessel, "arrives": m.arrives.isoformat(),
            "leaves": m.leaves.isoformat()}


@require_GET
def berth_detail(request, code):
    berth = get_object_or_404(Berth, code=code.upper())
    moorings = berth.moorings.order_by("arrives", "pk")
    return JsonResponse({"code": berth.code, "max_length": berth.max_length,
                         "moorings": [_mooring(m) for m in moorings]})


@require_GET
def mooring_detail(request, pk):
    return JsonResponse(_mooring(get_object_or_404(Mooring, pk=pk)))


@require_POST
def moor(request, code):
    berth = get_object_or_404(Berth, code=code.upper())
    vessel = request.POST.get("vessel", "").strip()
    length = request.POST.get("length", "")
    if not vessel or not length.isdigit():
        raise HarbourError("bad_request", "vessel and length are required")
    arrives, leaves = _date(request, "arrives"), _date(request, "leaves")
    if int(length) > berth.max_length:
        raise HarbourError("too_long", f"berth {berth.code} takes {berth.max_length} m at most")
    if berth.moorings.filter(arrives__lt=leaves, leaves__gt=arrives).exists():
        raise BerthTaken("berth_taken", f"berth {berth.code} is taken on some of those days")
    try:
        with transaction.atomic():
            mooring = Mooring.objects.create(berth=berth, vessel=vessel, length=int(length), arrives=arrives, leaves=leaves)
    except IntegrityError:
        raise HarbourError("bad_dates", "a vessel leaves after it arrives") from None
    return JsonResponse(_mooring(mooring), status=201)
