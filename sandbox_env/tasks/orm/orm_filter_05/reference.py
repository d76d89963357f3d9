result = list(
    Book.objects.filter(in_print=False, publisher__is_independent=True)
    .order_by("publisher__name", "title")
    .values_list("publisher__name", "title")
)
