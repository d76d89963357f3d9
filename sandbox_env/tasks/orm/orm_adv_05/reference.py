length = Case(
    When(pages__lt=250, then=Value("short")),
    When(pages__lt=450, then=Value("medium")),
    default=Value("long"),
)
rows = {
    r["length"]: (r["length"], r["n"], r["p"])
    for r in Book.objects.annotate(length=length).values("length").annotate(n=Count("id"), p=Count("id", filter=Q(in_print=True)))
}
result = [rows[k] for k in ("short", "medium", "long")]
