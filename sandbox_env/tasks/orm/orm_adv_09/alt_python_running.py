# monthly sums grouped by the ORM, the running total accumulated in Python
from itertools import accumulate

monthly = (
    Sale.objects.filter(store__name="Paper Lantern", sold_on__gte=date(2024, 1, 1), sold_on__lt=date(2025, 1, 1))
    .annotate(month=TruncMonth("sold_on"))
    .values("month")
    .annotate(units=Sum("quantity"))
    .order_by("month")
)
months = [(m["month"].strftime("%Y-%m"), m["units"]) for m in monthly]
result = [(month, units, running) for (month, units), running in zip(months, accumulate(u for _, u in months))]
