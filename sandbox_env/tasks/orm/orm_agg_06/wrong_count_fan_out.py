result = list(
    Publisher.objects.annotate(b=Count("books"), a=Count("books__authors"))
    .filter(b__gt=0)
    .order_by("-a", "name")
    .values_list("name", "b", "a")
)
