# the month extracted as an annotation and compared with gte
qs = (
    Book.objects.annotate(month=ExtractMonth("published"))
    .filter(month__gte=10, publisher__country__in=("USA", "UK"))
    .order_by("-published", "title")
)
result = list(qs.values_list("title", "published", "publisher__country"))
result = [(t, d.isoformat(), c) for t, d, c in result]
