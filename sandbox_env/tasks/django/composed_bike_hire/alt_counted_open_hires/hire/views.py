"""Class-based views; the list reads plain values."""

from django.http import Http404, JsonResponse
from django.utils import timezone
from django.views import View

from hire.forms import HireForm
from hire.models import Bike, Hire


class BikeListView(View):
    http_method_names = ["get"]

    def get(self, request):
        rows = Bike.objects.with_hire_stats().available()
        if request.GET.get("kind"):
            rows = rows.filter(kind=request.GET["kind"])
        rows = rows.order_by("tag").values("tag", "kind", "hire_count")
        return JsonResponse({"bikes": [{"tag": r["tag"], "kind": r["kind"], "hires": r["hire_count"]} for r in rows]})


class StartHireView(View):
    http_method_names = ["post"]

    def post(self, request):
        form = HireForm(data=request.POST)
        if form.is_valid():
            hire = form.save()
            return JsonResponse({"id": hire.id, "bike": hire.bike.tag, "rider": hire.rider}, status=201)
        errors = {}
        for field, found in form.errors.as_data().items():
            errors[field] = [e.code for e in found]
        return JsonResponse({"errors": errors}, status=400)


class ReturnHireView(View):
    http_method_names = ["post"]

    def post(self, request, pk):
        try:
            hire = Hire.objects.select_related("bike").get(pk=pk)
        except Hire.DoesNotExist:
            raise Http404("no such hire") from None
        if hire.returned:
            return JsonResponse({"error": "already_returned"}, status=409)
        Hire.objects.filter(pk=pk).update(returned=timezone.now())
        return JsonResponse({"bike": hire.bike.tag, "available": Bike.objects.available().filter(pk=hire.bike_id).exists()})


bike_list = BikeListView.as_view()
start_hire = StartHireView.as_view()
return_hire = ReturnHireView.as_view()
