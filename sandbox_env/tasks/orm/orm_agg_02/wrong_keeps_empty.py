result = list(Publisher.objects.annotate(n=Count("books")).order_by("-n", "name").values_list("name", "n"))
