from django.db.models import Prefetch
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

from orchard.models import Orchard, Picking


def week_url(year, week):
    try:
        return reverse("harvest:week", kwargs={"year": year, "week": week})
    except NoReverseMatch:
        return None


@require_GET
def week_report(request, year, week):
    pickings = Picking.objects.filter(year=year, week=week)
    orchards = Orchard.objects.order_by("name")
    for o in orchards:
        o.this_week = list(pickings.filter(orchard=o))
    rows = [
        {
            "orchard": o.name,
            "crates": sum(p.crates for p in o.this_week),
            "pickers": sorted({p.picker for p in o.this_week}),
        }
        for o in orchards
    ]
    return JsonResponse({"year": year, "week": week, "orchards": rows,
                         "previous": week_url(year, week - 1), "next": week_url(year, week + 1)})


@require_GET
def orchard_detail(request, slug):
    orchard = get_object_or_404(Orchard, slug=slug)
    weeks = orchard.pickings.order_by("year", "week").values_list("year", "week").distinct()
    return JsonResponse({"name": orchard.name, "weeks": [week_url(y, w) for y, w in weeks]})
