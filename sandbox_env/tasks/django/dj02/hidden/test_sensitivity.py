import pytest

from accounts.forms import SignupForm


def data(**overrides):
    base = {
        "username": "alice" + "_1",
        "email": "alice@example.com",
        "password": "correct horse battery",
        "password_confirm": "correct horse battery",
    }
    base.update(overrides)
    return base


def codes(form, field):
    return [e.code for e in form.errors.as_data().get(field, [])]


@pytest.mark.django_db
def test_username_of_30_characters_is_accepted_and_31_refused_with_max_length():
    assert SignupForm(data=data(username="a" * 30)).is_valid()
    form = SignupForm(data=data(username="a" * 31))
    assert not form.is_valid()
    assert codes(form, "username") == ["max_length"]


@pytest.mark.django_db
def test_password_of_8_characters_is_accepted_and_7_refused_with_min_length():
    assert SignupForm(data=data(password="abcdefgh", password_confirm="abcdefgh")).is_valid()
    form = SignupForm(data=data(password="abcdefg", password_confirm="abcdefg"))
    assert not form.is_valid()
    assert codes(form, "password") == ["min_length"]


@pytest.mark.django_db
def test_a_taken_username_is_found_whatever_its_stored_case():
    from accounts.models import Member

    Member.objects.create(username="alice".capitalize() + "_1", email="old@example.com")
    form = SignupForm(data=data(username="alice" + "_1"))
    assert not form.is_valid()
    assert codes(form, "username") == ["taken"]


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["josé", "naïve_1", "user٣"])
def test_letters_and_digits_outside_ascii_make_the_username_invalid(username):
    form = SignupForm(data=data(username=username))
    assert not form.is_valid()
    assert codes(form, "username") == ["invalid_username"]
