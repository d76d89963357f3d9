# negated Q objects instead of exclude(__in)
qs = Author.objects.filter(~Q(country="UK"), ~Q(country="USA"), Q(birth_date__isnull=False)).order_by("birth_date", "name")
result = [(name, country, born.isoformat()) for name, country, born in qs.values_list("name", "country", "birth_date")]
