result = list(
    Book.objects.filter(genre__name__in=["Fantasy", "Mystery", "Horror"])
    .order_by("title")
    .values_list("genre__name", "title")
)
