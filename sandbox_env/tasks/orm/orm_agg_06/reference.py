result = list(
    Publisher.objects.annotate(b=Count("books", distinct=True), a=Count("books__authors", distinct=True))
    .filter(b__gt=0)
    .order_by("-a", "name")
    .values_list("name", "b", "a")
)
