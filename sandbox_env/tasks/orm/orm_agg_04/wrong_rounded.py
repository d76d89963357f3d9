result = [(c, round(a, 1)) for c, a in Book.objects.values("publisher__country").annotate(avg=Avg("pages"))
          .order_by("-avg", "publisher__country").values_list("publisher__country", "avg")]
