result = list(
    Genre.objects.annotate(b=Count("books"), r=Count("books__reviews"), avg=Avg("books__reviews__rating"))
    .filter(b__gt=0)
    .order_by("name")
    .values_list("name", "b", "r", "avg")
)
