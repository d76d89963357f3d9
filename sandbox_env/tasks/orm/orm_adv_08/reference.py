units = (
    Sale.objects.filter(book__publisher=OuterRef("pk")).values("book__publisher").annotate(s=Sum("quantity")).values("s")
)
reviews = (
    Review.objects.filter(book__publisher=OuterRef("pk")).values("book__publisher").annotate(c=Count("id")).values("c")
)
qs = (
    Publisher.objects.filter(Exists(Book.objects.filter(publisher=OuterRef("pk"))))
    .annotate(u=Coalesce(Subquery(units), 0), r=Coalesce(Subquery(reviews), 0))
    .order_by("-u", "name")
)
result = list(qs.values_list("name", "u", "r"))
