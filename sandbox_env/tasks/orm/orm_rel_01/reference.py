result = list(
    Book.objects.filter(publisher__country__in=["Brazil", "Nigeria"])
    .order_by("title")
    .values_list("title", "publisher__name", "publisher__founded")
)
