"""Relations: triplets as first-class memory (add, invalidate, find, aliases) and
``recall_analogy`` (a:b :: c:?) over them. See docs/relations.md."""
