result = list(
    Sale.objects.values("store__country")
    .annotate(units=Sum("quantity"), n=Count("id"))
    .order_by("-units", "store__country")
    .values_list("store__country", "units", "n")
)
