result = list(
    Book.objects.filter(in_print=True, publisher__founded__lt=1970)
    .order_by("publisher__name", "title")
    .values_list("publisher__name", "publisher__founded", "title")
)
