"""The signup form: write SignupForm here (see the task)."""
