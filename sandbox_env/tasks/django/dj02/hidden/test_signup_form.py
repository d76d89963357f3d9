import pytest
from django.core.exceptions import NON_FIELD_ERRORS

from accounts.forms import SignupForm
from accounts.models import Member

pytestmark = pytest.mark.django_db


def payload(**changes):
    fields = {
        "username": "Zed_99",
        "email": "Zed.Person@Mail.Example.ORG",
        "password": "lantern-ocean-72",
        "password_confirm": "lantern-ocean-72",
    }
    fields.update(changes)
    return fields


def error_codes(form, name):
    return [error.code for error in form.errors.as_data().get(name, [])]


def test_username_and_email_are_normalized():
    form = SignupForm(data=payload(username="\tZed_99  "))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["username"] == "zed_99"
    assert form.cleaned_data["email"] == "zed.person@mail.example.org"


def test_each_reserved_name_is_refused_in_any_case():
    for name in ("ROOT", "Support", "admin"):
        form = SignupForm(data=payload(username=name))
        assert form.is_valid() is False
        assert error_codes(form, "username") == ["reserved"]
    assert error_codes(SignupForm(data=payload(username="support")), NON_FIELD_ERRORS) == []


def test_usernames_with_dashes_or_dots_are_invalid():
    form = SignupForm(data=payload(username="zed-99"))
    assert error_codes(form, "username") == ["invalid_username"]
    form = SignupForm(data=payload(username="zed.99"))
    assert error_codes(form, "username") == ["invalid_username"]


def test_taken_username_ignores_case_on_both_sides():
    Member.objects.create(username="quinn".capitalize(), email="q@example.com")
    form = SignupForm(data=payload(username=" " + "quinn"[:1] + "quinn"[1:].upper()))
    assert form.is_valid() is False
    assert error_codes(form, "username") == ["taken"]


def test_blocked_domains_in_any_case_land_on_email():
    form = SignupForm(data=payload(email="a.b@TrashMail.Net"))
    assert error_codes(form, "email") == ["blocked_domain"]
    assert sorted(form.errors) == ["email"]


def test_other_domains_that_mention_a_blocked_one_are_fine():
    form = SignupForm(data=payload(email="person@notmailinator.com"))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["email"] == "person@notmailinator.com"


def test_mismatch_is_an_error_of_password_confirm_only():
    form = SignupForm(data=payload(password_confirm="lantern-ocean-73"))
    assert error_codes(form, "password_confirm") == ["password_mismatch"]
    assert error_codes(form, "password") == []
    assert error_codes(form, NON_FIELD_ERRORS) == []


def test_username_inside_the_password_in_another_case():
    form = SignupForm(data=payload(username="otto".capitalize(), password="xx" + "otto".upper() + "xx-long", password_confirm="xx" + "otto".upper() + "xx-long"))
    assert form.is_valid() is False
    assert error_codes(form, NON_FIELD_ERRORS) == ["password_contains_username"]
    assert sorted(form.errors) == [NON_FIELD_ERRORS]


def test_mismatch_and_containment_together():
    form = SignupForm(data=payload(username="mia", password="mia-password", password_confirm="mia-passw0rd"))
    assert error_codes(form, "password_confirm") == ["password_mismatch"]
    assert error_codes(form, NON_FIELD_ERRORS) == ["password_contains_username"]


def test_short_password_reports_min_length_and_no_cross_field_errors():
    form = SignupForm(data=payload(username="bo", password="bo12", password_confirm="bo12bo12"))
    assert error_codes(form, "password") == ["min_length"]
    assert error_codes(form, "password_confirm") == []
    assert error_codes(form, NON_FIELD_ERRORS) == []


def test_taken_username_skips_the_containment_rule():
    Member.objects.create(username="lena", email="lena@example.com")
    form = SignupForm(data=payload(username="lena".capitalize(), password="lena-secret-1", password_confirm="lena-secret-1"))
    assert error_codes(form, "username") == ["taken"]
    assert error_codes(form, NON_FIELD_ERRORS) == []


def test_only_passwords_missing():
    form = SignupForm(data={"username": "neo", "email": "neo@example.com"})
    assert form.is_valid() is False
    assert sorted(form.errors) == ["password", "password_confirm"]
    assert error_codes(form, "password") == ["required"]


def test_save_stores_the_normalized_member():
    form = SignupForm(data=payload(username=" " + "kai".upper() + " ", email="kai".upper() + "@Example.com"))
    assert form.is_valid(), form.errors
    member = form.save()
    stored = Member.objects.get(pk=member.pk)
    assert (stored.username, stored.email) == ("kai", "kai@example.com")
    assert Member.objects.count() == 1
