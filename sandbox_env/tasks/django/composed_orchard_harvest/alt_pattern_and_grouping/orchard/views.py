"""Class-based views; the week's pickings fetched once and grouped in Python (two queries)."""

from collections import defaultdict

from django.http import Http404, JsonResponse
from django.urls import NoReverseMatch, reverse
from django.views import View

from orchard.models import Orchard, Picking


def link(year, week):
    try:
        return reverse("harvest:week", args=[year, week])
    except NoReverseMatch:
        return None


class WeekReport(View):
    http_method_names = ["get"]

    def get(self, request, year, week):
        crates, pickers = defaultdict(int), defaultdict(set)
        for orchard_id, picker, n in Picking.objects.filter(year=year, week=week).values_list("orchard_id", "picker", "crates"):
            crates[orchard_id] += n
            pickers[orchard_id].add(picker)
        rows = [
            {"orchard": name, "crates": crates[pk], "pickers": sorted(pickers[pk])}
            for pk, name in Orchard.objects.order_by("name").values_list("pk", "name")
        ]
        return JsonResponse(
            {"year": year, "week": week, "orchards": rows, "previous": link(year, week - 1), "next": link(year, week + 1)}
        )


class OrchardDetail(View):
    http_method_names = ["get"]

    def get(self, request, slug):
        orchard = Orchard.objects.filter(slug=slug).first()
        if orchard is None:
            raise Http404("no such orchard")
        weeks = sorted(set(Picking.objects.filter(orchard=orchard).values_list("year", "week")))
        return JsonResponse({"name": orchard.name, "weeks": [link(y, w) for y, w in weeks]})


week_report = WeekReport.as_view()
orchard_detail = OrchardDetail.as_view()
