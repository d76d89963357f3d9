result = list(
    Publisher.objects.filter(books__authors__birth_date__lt=date(1960, 1, 1))
    .order_by("name")
    .values_list("name", "country")
)
