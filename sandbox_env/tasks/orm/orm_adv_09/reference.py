qs = (
    Sale.objects.filter(store__name="Paper Lantern", sold_on__year=2024)
    .annotate(month=TruncMonth("sold_on"))
    .annotate(
        units=Window(Sum("quantity"), partition_by=F("month")),
        running=Window(Sum("quantity"), order_by=F("month").asc()),
    )
    .values_list("month", "units", "running")
    .distinct()
    .order_by("month")
)
result = [(m.strftime("%Y-%m"), u, r) for m, u, r in qs]
