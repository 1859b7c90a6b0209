import re

_EMAIL = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


def valid_email(text):
    """True when ``text`` looks like an e-mail address."""
    return bool(_EMAIL.match(text))
