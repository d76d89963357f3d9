from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET, require_POST

from cargo.forms import BookingForm
from cargo.models import Booking, Sailing


def _free(sailing):
    return sailing.lane_metres - sailing.booked_metres


@require_GET
def board(request):
    sailings = Sailing.objects.order_by("departs", "code").prefetch_related("bookings")
    rows = [
        {"code": s.code, "free_metres": _free(s), "plates": sorted(b.plate for b in s.bookings.all())}
        for s in sailings
    ]
    return JsonResponse({"sailings": rows})


@require_POST
def book(request, code):
    sailing = get_object_or_404(Sailing, code=code)
    form = BookingForm({**request.POST.dict(), "sailing": sailing.pk})
    if not form.is_valid():
        errors = {field: [e["code"] for e in found] for field, found in form.errors.get_json_data().items()}
        return JsonResponse({"errors": errors}, status=400)
    booking = form.save()
    sailing.refresh_from_db()
    return JsonResponse({"id": booking.pk, "plate": booking.plate, "free_metres": _free(sailing)}, status=201)


@require_POST
def cancel(request, pk):
    booking = get_object_or_404(Booking, pk=pk)
    sailing = booking.sailing
    booking.delete()
    sailing.refresh_from_db()
    return JsonResponse({"code": sailing.code, "free_metres": _free(sailing)})
