# exclude() over the multi-valued relation instead of ~Exists
qs = Publisher.objects.exclude(books__in_print=False).annotate(n=Count("books")).filter(n__gte=1).order_by("name")
result = [(p.name, p.n) for p in qs]
