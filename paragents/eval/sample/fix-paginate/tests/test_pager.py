import unittest

from pager import paginate


class PaginateTest(unittest.TestCase):
    def test_pages(self):
        items = list(range(10))
        self.assertEqual(paginate(items, 1, 4), [0, 1, 2, 3])
        self.assertEqual(paginate(items, 2, 4), [4, 5, 6, 7])
        self.assertEqual(paginate(items, 3, 4), [8, 9])
        self.assertEqual(paginate(items, 4, 4), [])

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            paginate([1], 0, 1)
