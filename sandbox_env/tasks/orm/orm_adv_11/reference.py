out_of_print = Book.objects.filter(publisher=OuterRef("pk"), in_print=False)
qs = Publisher.objects.filter(~Exists(out_of_print)).annotate(n=Count("books")).filter(n__gt=0).order_by("name")
result = list(qs.values_list("name", "n"))
