qs = Genre.objects.annotate(lo=Min("books__price"), hi=Max("books__price")).filter(lo__isnull=False).order_by("name")
result = [(g.name, str(g.lo), str(g.hi)) for g in qs]
