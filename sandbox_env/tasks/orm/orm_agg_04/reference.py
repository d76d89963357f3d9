result = list(
    Book.objects.values("publisher__country")
    .annotate(avg=Avg("pages"))
    .order_by("-avg", "publisher__country")
    .values_list("publisher__country", "avg")
)
