result = list(
    Book.objects.filter(publisher__country__in=["Brazil", "Canada", "UK"])
    .exclude(genre__name="Fantasy")
    .order_by("title")
    .values_list("title", "genre__name")
)
