result = list(
    Book.objects.filter(sales__store__country="USA")
    .filter(reviews__verified=True, reviews__rating=5)
    .order_by("title")
    .values_list("title", "publisher__name")
)
