from django.urls import path, register_converter

from catalog import converters, views

register_converter(converters.FourDigitYearConverter, "yyyy")
register_converter(converters.MonthConverter, "mm")

app_name = "catalog"

urlpatterns = [
    path("articles/<slug:slug>/", views.article_detail, name="article-detail"),
    path("articles/<yyyy:year>/", views.year_archive, name="year-archive"),
    path("articles/<yyyy:year>/<mm:month>/", views.month_archive, name="month-archive"),
    path("a/<int:pk>/", views.article_short, name="article-short"),
    path("docs/<path:page>/", views.doc_page, name="doc-page"),
]
