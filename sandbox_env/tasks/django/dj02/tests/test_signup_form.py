import pytest
from django.core.exceptions import NON_FIELD_ERRORS

from accounts.forms import SignupForm
from accounts.models import Member


def data(**overrides):
    base = {
        "username": "Alice_1",
        "email": "Alice@Example.COM",
        "password": "correct horse battery",
        "password_confirm": "correct horse battery",
    }
    base.update(overrides)
    return base


def codes(form, field):
    return [e.code for e in form.errors.as_data().get(field, [])]


@pytest.mark.django_db
def test_valid_data_is_normalized():
    form = SignupForm(data=data(username="  Alice_1 "))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["username"] == "alice_1"
    assert form.cleaned_data["email"] == "alice@example.com"


@pytest.mark.django_db
def test_reserved_username_error_lands_on_username():
    form = SignupForm(data=data(username="Admin"))
    assert not form.is_valid()
    assert codes(form, "username") == ["reserved"]
    assert codes(form, NON_FIELD_ERRORS) == []


@pytest.mark.django_db
def test_username_with_other_characters_is_invalid():
    form = SignupForm(data=data(username="bob smith"))
    assert not form.is_valid()
    assert codes(form, "username") == ["invalid_username"]


@pytest.mark.django_db
def test_taken_username_is_compared_case_insensitively():
    Member.objects.create(username="carol", email="carol@example.com")
    form = SignupForm(data=data(username="CAROL"))
    assert not form.is_valid()
    assert codes(form, "username") == ["taken"]


@pytest.mark.django_db
def test_blocked_domain_error_lands_on_email():
    form = SignupForm(data=data(email="someone@MAILINATOR.com"))
    assert not form.is_valid()
    assert codes(form, "email") == ["blocked_domain"]
    assert set(form.errors) == {"email"}


@pytest.mark.django_db
def test_password_mismatch_lands_on_password_confirm():
    form = SignupForm(data=data(password_confirm="correct horse battery!"))
    assert not form.is_valid()
    assert codes(form, "password_confirm") == ["password_mismatch"]
    assert codes(form, NON_FIELD_ERRORS) == []
    assert "password" not in form.errors


@pytest.mark.django_db
def test_password_containing_username_is_a_non_field_error():
    form = SignupForm(data=data(username="Dave", password="iamDAVE123", password_confirm="iamDAVE123"))
    assert not form.is_valid()
    assert codes(form, NON_FIELD_ERRORS) == ["password_contains_username"]
    assert set(form.errors) == {NON_FIELD_ERRORS}


@pytest.mark.django_db
def test_both_cross_field_rules_report_at_once():
    form = SignupForm(data=data(username="erin", password="erin-1234", password_confirm="erin-9999"))
    assert not form.is_valid()
    assert codes(form, "password_confirm") == ["password_mismatch"]
    assert codes(form, NON_FIELD_ERRORS) == ["password_contains_username"]


@pytest.mark.django_db
def test_short_password_skips_the_mismatch_rule():
    form = SignupForm(data=data(password="short", password_confirm="other"))
    assert not form.is_valid()
    assert codes(form, "password") == ["min_length"]
    assert "password_confirm" not in form.errors
    assert codes(form, NON_FIELD_ERRORS) == []


@pytest.mark.django_db
def test_invalid_username_skips_the_containment_rule():
    form = SignupForm(data=data(username="root", password="root-password", password_confirm="root-password"))
    assert not form.is_valid()
    assert codes(form, "username") == ["reserved"]
    assert codes(form, NON_FIELD_ERRORS) == []


@pytest.mark.django_db
def test_missing_fields_do_not_crash_clean():
    form = SignupForm(data={"email": "x@example.com"})
    assert not form.is_valid()
    assert set(form.errors) == {"username", "password", "password_confirm"}
    assert all(codes(form, f) == ["required"] for f in ("username", "password", "password_confirm"))


@pytest.mark.django_db
def test_save_creates_the_member():
    form = SignupForm(data=data())
    assert form.is_valid(), form.errors
    member = form.save()
    assert isinstance(member, Member)
    assert Member.objects.get(pk=member.pk).username == "alice_1"
    assert member.email == "alice@example.com"
