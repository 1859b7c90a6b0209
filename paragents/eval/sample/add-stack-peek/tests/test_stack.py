import unittest

from stack import Stack


class StackTest(unittest.TestCase):
    def test_peek(self):
        s = Stack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.peek(), 2)
        self.assertEqual(len(s), 2)
        self.assertEqual(s.pop(), 2)
        self.assertEqual(s.peek(), 1)

    def test_empty(self):
        s = Stack()
        self.assertTrue(s.is_empty())
        self.assertEqual(len(s), 0)
        with self.assertRaises(IndexError):
            s.peek()
        s.push("x")
        self.assertFalse(s.is_empty())
