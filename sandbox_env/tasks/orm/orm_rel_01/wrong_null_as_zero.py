result = [
    (t, p, f or 0)
    for t, p, f in Book.objects.filter(publisher__country__in=["Brazil", "Nigeria"])
    .order_by("title")
    .values_list("title", "publisher__name", "publisher__founded")
]
