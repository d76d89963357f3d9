qs = Publisher.objects.exclude(books__in_print=False).annotate(n=Count("books")).order_by("name")
result = list(qs.values_list("name", "n"))
