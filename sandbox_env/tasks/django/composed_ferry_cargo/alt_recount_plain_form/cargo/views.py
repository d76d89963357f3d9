"""Class-based views; the board groups the plates in Python (two queries)."""

from collections import defaultdict

from django.http import Http404, JsonResponse
from django.views import View

from cargo.forms import BookingForm
from cargo.models import Booking, Sailing


def free_metres(sailing_id):
    lane, booked = Sailing.objects.values_list("lane_metres", "booked_metres").get(pk=sailing_id)
    return lane - booked


class BoardView(View):
    http_method_names = ["get"]

    def get(self, request):
        plates = defaultdict(list)
        for sailing_id, plate in Booking.objects.values_list("sailing_id", "plate"):
            plates[sailing_id].append(plate)
        rows = Sailing.objects.order_by("departs", "code").values_list("pk", "code", "lane_metres", "booked_metres")
        return JsonResponse(
            {"sailings": [{"code": c, "free_metres": lane - b, "plates": sorted(plates[pk])} for pk, c, lane, b in rows]}
        )


class BookView(View):
    http_method_names = ["post"]

    def post(self, request, code):
        sailing = Sailing.objects.filter(code=code).first()
        if sailing is None:
            raise Http404("no such sailing")
        form = BookingForm({"plate": request.POST.get("plate"), "length": request.POST.get("length"), "sailing": sailing.pk})
        if not form.is_valid():
            errors = {name: [e.code for e in err.as_data()] for name, err in form.errors.items()}
            return JsonResponse({"errors": errors}, status=400)
        booking = form.save()
        return JsonResponse({"id": booking.pk, "plate": booking.plate, "free_metres": free_metres(sailing.pk)}, status=201)


class CancelView(View):
    http_method_names = ["post"]

    def post(self, request, pk):
        booking = Booking.objects.filter(pk=pk).first()
        if booking is None:
            raise Http404("no such booking")
        sailing_id = booking.sailing_id
        booking.delete()
        code = Sailing.objects.values_list("code", flat=True).get(pk=sailing_id)
        return JsonResponse({"code": code, "free_metres": free_metres(sailing_id)})


board = BoardView.as_view()
book = BookView.as_view()
cancel = CancelView.as_view()
