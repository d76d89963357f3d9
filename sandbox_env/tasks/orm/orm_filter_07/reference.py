qs = Author.objects.exclude(country__in=["UK", "USA"]).filter(birth_date__isnull=False).order_by("birth_date", "name")
result = [(a.name, a.country, a.birth_date.isoformat()) for a in qs]
