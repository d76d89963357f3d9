from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from hire.forms import HireForm
from hire.models import Bike, Hire


@require_GET
def bike_list(request):
    bikes = Bike.objects.available().order_by("tag")
    kind = request.GET.get("kind")
    if kind:
        bikes = bikes.filter(kind=kind)
    return JsonResponse({"bikes": [{"tag": b.tag, "kind": b.kind, "hires": b.hires.count()} for b in bikes]})


@require_POST
def start_hire(request):
    form = HireForm(request.POST)
    if not form.is_valid():
        errors = {field: [e["code"] for e in found] for field, found in form.errors.get_json_data().items()}
        return JsonResponse({"errors": errors}, status=400)
    hire = form.save()
    return JsonResponse({"id": hire.pk, "bike": hire.bike.tag, "rider": hire.rider}, status=201)


@require_POST
def return_hire(request, pk):
    hire = get_object_or_404(Hire, pk=pk)
    if hire.returned is not None:
        return JsonResponse({"error": "already_returned"}, status=409)
    hire.returned = timezone.now()
    hire.save()
    available = Bike.objects.available().filter(pk=hire.bike_id).exists()
    return JsonResponse({"bike": hire.bike.tag, "available": available})
