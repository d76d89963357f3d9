qs = Genre.objects.annotate(lo=Min("books__price"), hi=Max("books__price")).filter(lo__isnull=False).order_by("name")
result = [(g.name, format(g.lo, ".2f"), format(g.hi, ".2f")) for g in qs]
