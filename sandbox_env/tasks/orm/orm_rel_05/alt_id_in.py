# the publishers' ids taken from the qualifying books: no join fan-out, no distinct()
old = Book.objects.filter(authors__birth_date__lt=date(1960, 1, 1)).values("publisher_id")
result = list(Publisher.objects.filter(id__in=old).order_by("name").values_list("name", "country"))
