result = list(Author.objects.annotate(n=Count("books")).filter(n__gt=3).order_by("-n", "name").values_list("name", "n"))
