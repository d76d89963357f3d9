result = list(
    Publisher.objects.annotate(n=Count("books")).filter(n__gt=0).order_by("-n", "name").values_list("name", "n")
)
