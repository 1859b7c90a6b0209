def shout(text):
    """Upper-case ``text`` with an exclamation mark."""
    return text.upper() + "!"


def slugify(text):
    """A URL slug of ``text`` (see the task)."""
    raise NotImplementedError
