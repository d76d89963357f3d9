from django.urls import include, path, register_converter

from catalog.converters import FourDigitYearConverter, MonthConverter
from catalog.views import article_detail, article_short, doc_page, month_archive, year_archive

register_converter(FourDigitYearConverter, "yyyy")
register_converter(MonthConverter, "mm")

app_name = "catalog"

articles = [
    path("<yyyy:year>/", year_archive, name="year-archive"),
    path("<yyyy:year>/<mm:month>/", month_archive, name="month-archive"),
    path("<slug:slug>/", article_detail, name="article-detail"),
]

urlpatterns = [
    path("articles/", include(articles)),
    path("a/<int:pk>/", article_short, name="article-short"),
    path("docs/<path:page>/", doc_page, name="doc-page"),
]
